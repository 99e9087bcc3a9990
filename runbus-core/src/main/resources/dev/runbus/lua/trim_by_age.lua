-- Trims a stream nobody reads through a group (a dead-letter stream) to the entries younger than an
-- age, on the Redis clock: an operator's opt-in, since a dead letter is often the only copy left.
--
-- KEYS[1]  the stream
-- ARGV[1]  age, milliseconds (positive)
-- Returns  entries trimmed
local t = redis.call('TIME')
local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[1])
if cutoff <= 0 or redis.call('TYPE', KEYS[1]).ok ~= 'stream' then
  return 0
end
return redis.call('XTRIM', KEYS[1], 'MINID', string.format('%.0f', cutoff) .. '-0')
