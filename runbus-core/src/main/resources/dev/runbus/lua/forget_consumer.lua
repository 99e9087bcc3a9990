-- Removes a dead consumer's heartbeat before it is deleted from its groups (delete_consumer.lua):
-- only if it has none, or none younger than the dead-after time, on the Redis clock. A consumer that
-- beats again later simply adds its heartbeat back.
--
-- KEYS[1]  heartbeat set of the group
-- ARGV[1]  consumer
-- ARGV[2]  dead after, milliseconds without a heartbeat
-- Returns  1 dead (heartbeat removed, or none), 0 alive (recent heartbeat)
local beats, consumer = KEYS[1], ARGV[1]
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local seen = redis.call('ZSCORE', beats, consumer)
if seen and now - tonumber(seen) < tonumber(ARGV[2]) then
  return 0
end
redis.call('ZREM', beats, consumer)
return 1
