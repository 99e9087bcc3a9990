-- Takes the lease of a partition in an ordered group, if nobody holds it. Each lease taken gets a
-- fencing token one above the last (the counter outlives the lease), so the ack, claim and
-- dead-letter scripts can refuse a consumer whose lease was taken by another. The lease expires on
-- the Redis server's clock, so the consumers' clocks do not matter.
--
-- KEYS[1]  the partition's lease (string: "<fencing token> <consumer> <acquired at, epoch ms>")
-- KEYS[2]  the partition's fencing-token counter (same hash slot)
-- ARGV[1]  consumer
-- ARGV[2]  lease time, milliseconds
-- Returns  the lease's value, or false if it is held
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local holder = token .. ' ' .. ARGV[1] .. ' ' .. (t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('SET', KEYS[1], holder, 'PX', ARGV[2])
return holder
