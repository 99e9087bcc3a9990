-- Records that consumers are alive, stamped with the Redis server's clock so that processes
-- with skewed clocks agree on who is dead.
--
-- KEYS[1]  heartbeat set of one group (sorted set: consumer -> epoch milliseconds)
-- ARGV     consumer names
-- Returns  per consumer, in order, the milliseconds since its previous heartbeat, or -1 when it had
--          none (a subscription's first heartbeat uses it to see whether another process holds the name)
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local ages = {}
for i, consumer in ipairs(ARGV) do
  local before = redis.call('ZSCORE', KEYS[1], consumer)
  ages[i] = before and math.max(0, now - tonumber(before)) or -1
  redis.call('ZADD', KEYS[1], now, consumer)
end
return ages
