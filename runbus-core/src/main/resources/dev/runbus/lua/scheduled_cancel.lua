-- Cancels one scheduled entry: removes it from the delay set and drops its fields, together.
--
-- KEYS[1]  delay set
-- KEYS[2]  scheduled entries
-- ARGV[1]  scheduled entry id
-- Returns  1 when it was scheduled, 0 when not (never, moved already, or cancelled)
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return removed
