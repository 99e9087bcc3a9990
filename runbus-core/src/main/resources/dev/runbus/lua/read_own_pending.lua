-- Re-reads the entries still pending under this consumer's own name, after a restart.
-- XREADGROUP with an explicit id returns them (and the PEL counts one more delivery). The
-- deliveries returned count handler starts instead, from the partition's start record
-- (record_starts.lua), plus this one: the PEL's count also counts reads and claims whose reply was
-- lost and that no handler started on (docs/architecture.md, rule 13).
-- Entries deleted from the stream while pending come back without fields: they are acked
-- and returned as trimmed, never handed to a handler.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record (hash: entry id -> handler starts modulo 2^32, record_starts.lua; same hash slot)
-- ARGV[1]  group
-- ARGV[2]  consumer
-- ARGV[3]  read entries with an id greater than this one ("0" to start)
-- ARGV[4]  count
-- Returns  { { {id, {field, value, ...}, deliveries}, ... }, {trimmed id, ...}, last id seen or false }
--          deliveries is the handler starts recorded plus this one.
local stream, starts, group, consumer = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local reply = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', ARGV[4], 'STREAMS', stream, ARGV[3])
local entries, trimmed, last = {}, {}, false
if reply and reply[1] then
  for _, entry in ipairs(reply[1][2]) do
    local id = entry[1]
    last = id
    if entry[2] then
      local deliveries = (tonumber(redis.call('HGET', starts, id)) or 0) % 4294967296 + 1
      table.insert(entries, {id, entry[2], deliveries})
    else
      redis.call('XACK', stream, group, id)
      redis.call('HDEL', starts, id)
      table.insert(trimmed, id)
    end
  end
end
return {entries, trimmed, last}
