-- Keeps the membership of a consumer in an ordered group and answers the live members, from which
-- every member computes the same assignment of partitions. A member's score is the end of its
-- membership on the Redis server's clock; a member that stops renewing drops out a lease time later.
-- The scores come back too, with the server's time, so that the callers see which members stopped
-- renewing before they drop out (Assignment gives those nothing free).
--
-- KEYS[1]  the group's members (sorted set: consumer -> end of membership, epoch ms)
-- ARGV[1]  consumer
-- ARGV[2]  lease time, milliseconds; 0 to leave the group
-- Returns  { now (epoch ms), member, end of membership, member, end of membership, ... } for the
--          live members
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if ARGV[2] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], 10 * tonumber(ARGV[2]))
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local reply = {now}
for _, v in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')) do
  table.insert(reply, v)
end
return reply
