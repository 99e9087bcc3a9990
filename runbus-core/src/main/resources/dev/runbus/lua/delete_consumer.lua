-- Deletes a dead consumer from a group, only if its pending list is empty: deleting a consumer
-- with pending entries would make them unclaimable (DESIGN.md rule 6).
--
-- KEYS[1]  stream
-- KEYS[2]  heartbeat set of the group
-- ARGV[1]  group
-- ARGV[2]  consumer
-- ARGV[3]  dead after, milliseconds without a heartbeat
-- Returns  1 deleted, 0 alive (recent heartbeat), -1 still has pending entries
local stream, beats, group, consumer = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local seen = redis.call('ZSCORE', beats, consumer)
if seen and now - tonumber(seen) < tonumber(ARGV[3]) then
  return 0
end
if #redis.call('XPENDING', stream, group, '-', '+', 1, consumer) > 0 then
  return -1
end
redis.call('XGROUP', 'DELCONSUMER', stream, group, consumer)
redis.call('ZREM', beats, consumer)
return 1
