-- Takes over entries idle for at least min-idle (their consumer died or is stuck) with XAUTOCLAIM.
--
-- Before claiming, the idle candidates are read with XPENDING: this gives each one's owner and
-- delivery count (XAUTOCLAIM reports neither), and finds entries deleted from the stream while
-- pending. Those are acked and returned as trimmed, on every Redis version.
-- XAUTOCLAIM's reply has two shapes:
--   Redis 6.2: {cursor, entries}; a deleted entry is nil and stays pending.
--   Redis 7.x: {cursor, entries, deleted ids}; deleted entries are dropped from the PEL.
-- Both are handled; a nil entry the pre-scan missed is acked on a later pass.
-- The deliveries returned count handler starts, from the partition's start record (record_starts.lua),
-- plus this one: never the PEL's count, which also counts reads and claims whose reply was lost and
-- that no handler started on (docs/architecture.md, rule 13). A trimmed entry's start record goes with it.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record (hash: entry id -> handler starts modulo 2^32, record_starts.lua; same hash slot)
-- ARGV[1]  group
-- ARGV[2]  consumer taking over
-- ARGV[3]  min-idle in milliseconds
-- ARGV[4]  cursor ("0-0" to start a scan)
-- ARGV[5]  count
-- Returns  { next cursor, { {id, {field, value, ...}, deliveries, previous owner}, ... }, {trimmed id, ...} }
--          deliveries is the handler starts recorded plus this one; previous owner is "" when unknown.
local stream, starts, group, consumer = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local min_idle, cursor, count = ARGV[3], ARGV[4], ARGV[5]

local known, trimmed = {}, {}
for _, p in ipairs(redis.call('XPENDING', stream, group, 'IDLE', min_idle, cursor, '+', count)) do
  if #redis.call('XRANGE', stream, p[1], p[1]) == 0 then
    redis.call('XACK', stream, group, p[1])
    redis.call('HDEL', starts, p[1])
    table.insert(trimmed, p[1])
  else
    known[p[1]] = p
  end
end

local reply = redis.call('XAUTOCLAIM', stream, group, consumer, min_idle, cursor, 'COUNT', count)
local claimed = {}
for _, entry in ipairs(reply[2]) do
  if entry and entry[2] then
    local id = entry[1]
    local before = known[id]
    local deliveries = (tonumber(redis.call('HGET', starts, id)) or 0) % 4294967296 + 1
    table.insert(claimed, {id, entry[2], deliveries, before and before[2] or ''})
  end
end
if reply[3] then
  for _, id in ipairs(reply[3]) do
    redis.call('HDEL', starts, id)
    table.insert(trimmed, id)
  end
end
return {reply[1], claimed, trimmed}
