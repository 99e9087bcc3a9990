-- Schedules an entry: stores its fields under its id and puts the id into the delay set, scored by
-- its due time on this server's clock (TIME), never the caller's (docs/architecture.md, rule 8).
-- The same call sent again (a client resending after a reconnect) finds the id taken and schedules
-- nothing more: an entry is scheduled at most once per id.
--
-- KEYS[1]  delay set (sorted set: id -> due, epoch ms)
-- KEYS[2]  scheduled entries (hash: id -> MessagePack array of field, value, ...)
-- ARGV[1]  scheduled entry id
-- ARGV[2]  "in": due ARGV[3] ms from now; "at": due at ARGV[3], epoch ms
-- ARGV[3]  milliseconds
-- ARGV[4…] field, value, field, value, … (the stream entry to append when due)
-- Returns  {due, now}: the due time and the server's time, epoch ms
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = tonumber(ARGV[3])
if ARGV[2] == 'in' then
  due = now + due
end
if redis.call('HSETNX', KEYS[2], ARGV[1], cmsgpack.pack({unpack(ARGV, 4)})) == 1 then
  redis.call('ZADD', KEYS[1], due, ARGV[1])
else
  due = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or now)
end
return {due, now}
