-- Records that consumers are alive, stamped with the Redis server's clock so that processes
-- with skewed clocks agree on who is dead.
--
-- KEYS[1]  heartbeat set of one group (sorted set: consumer -> epoch milliseconds)
-- ARGV     consumer names
-- Returns  the time written
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
for _, consumer in ipairs(ARGV) do
  redis.call('ZADD', KEYS[1], now, consumer)
end
return now
