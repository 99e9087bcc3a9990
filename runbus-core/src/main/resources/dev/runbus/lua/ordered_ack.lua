-- Acknowledges an entry of a partition of an ordered group, only for the partition's lease holder:
-- a consumer whose lease was taken (it paused past its lease, or lost its connection) must not ack
-- for the new owner, which handles the entry itself.
--
-- KEYS[1]  the partition's stream
-- KEYS[2]  the partition's lease
-- ARGV[1]  group
-- ARGV[2]  the lease's value for the caller
-- ARGV[3]  entry id
-- Returns  entries acked (0 or 1), or -1 if the caller does not hold the lease (nothing done)
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return -1
end
return redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
