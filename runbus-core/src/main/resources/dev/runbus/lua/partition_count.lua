-- Records a topic's partition count on its first use, and answers the count recorded.
-- A topic whose plain stream exists already was used with one partition before counts were
-- recorded (or by a bus configured with one): it is recorded as having one.
--
-- KEYS[1]  the topic's partition count record
-- KEYS[2]  the topic's stream as a topic of one partition (same hash slot)
-- ARGV[1]  the count this bus is configured with
-- Returns  the count recorded, as text
local recorded = redis.call('GET', KEYS[1])
if recorded then
  return recorded
end
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('SET', KEYS[1], '1')
  return '1'
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
