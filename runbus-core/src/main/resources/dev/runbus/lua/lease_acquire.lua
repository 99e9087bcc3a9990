-- Takes the lease of a partition in an ordered group, if nobody holds it. Each lease taken gets a
-- fencing token above every token handed out before, so the ack, claim and dead-letter scripts can
-- refuse a consumer whose lease was taken by another, and a store fenced by token refuses the older
-- holder. The token is the larger of the counter plus one and the Redis clock in milliseconds: the
-- counter keeps it growing while Redis keeps its data, and the clock floor keeps it growing when
-- Redis lost the counter (a restart without persistence, FLUSHALL, a failover to a replica that had
-- not received it), as long as the clock of the server that answers now is not behind the clock that
-- floored the lost tokens (docs/architecture.md, "Leases and fencing"). The lease expires on the
-- Redis server's clock, so the consumers' clocks do not matter.
--
-- Safe to run twice: a call that finds the lease taken by the same consumer's same acquisition (an
-- earlier call of it ran and its reply was lost: it timed out, or the client sent it again after a
-- reconnect) answers that lease as taken, renewed from now. Any other holder's lease is held.
--
-- KEYS[1]  the partition's lease (string: "<fencing token> <consumer> <acquired at, epoch ms> <acquisition>")
-- KEYS[2]  the partition's fencing-token counter (same hash slot)
-- ARGV[1]  consumer
-- ARGV[2]  lease time, milliseconds
-- ARGV[3]  acquisition: an id the caller keeps for this acquisition until a call of it is answered
-- Returns  the lease's value, or false if it is held
local held = redis.call('GET', KEYS[1])
if held then
  local consumer, acquisition = string.match(held, '^%d+ (%S+) %d+ (%S+)$')
  if consumer == ARGV[1] and acquisition == ARGV[3] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return held
  end
  return false
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local token = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + 1, now)
redis.call('SET', KEYS[2], string.format('%d', token))
local holder = string.format('%d', token) .. ' ' .. ARGV[1] .. ' ' .. string.format('%d', now) .. ' ' .. ARGV[3]
redis.call('SET', KEYS[1], holder, 'PX', ARGV[2])
return holder
