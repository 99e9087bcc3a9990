-- Deletes a consumer from the group of one partition's stream, only if its pending list there is
-- empty: deleting a consumer with pending entries would make them unclaimable (docs/architecture.md, rule 6).
-- Its heartbeat is checked and removed before, by forget_consumer.lua: the heartbeat set is keyed
-- by topic, a partition's stream by partition, and on a cluster one script reaches one slot. The
-- check that protects entries, an empty pending list, is the one made here, atomically.
--
-- KEYS[1]  stream
-- ARGV[1]  group
-- ARGV[2]  consumer
-- Returns  1 deleted, -1 still has pending entries
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
if #redis.call('XPENDING', stream, group, '-', '+', 1, consumer) > 0 then
  return -1
end
redis.call('XGROUP', 'DELCONSUMER', stream, group, consumer)
return 1
