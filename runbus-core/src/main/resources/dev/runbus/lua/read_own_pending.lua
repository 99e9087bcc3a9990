-- Re-reads the entries still pending under this consumer's own name, after a restart.
-- XREADGROUP with an explicit id returns them and counts one more delivery; the delivery count
-- is not in its reply, so it is read back from the PEL here, in the same atomic step.
-- Entries deleted from the stream while pending come back without fields: they are acked
-- and returned as trimmed, never handed to a handler.
--
-- KEYS[1]  stream
-- ARGV[1]  group
-- ARGV[2]  consumer
-- ARGV[3]  read entries with an id greater than this one ("0" to start)
-- ARGV[4]  count
-- Returns  { { {id, {field, value, ...}, deliveries}, ... }, {trimmed id, ...}, last id seen or false }
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local reply = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', ARGV[4], 'STREAMS', stream, ARGV[3])
local entries, trimmed, last = {}, {}, false
if reply and reply[1] then
  for _, entry in ipairs(reply[1][2]) do
    local id = entry[1]
    last = id
    if entry[2] then
      local pel = redis.call('XPENDING', stream, group, id, id, 1, consumer)
      table.insert(entries, {id, entry[2], pel[1][4]})
    else
      redis.call('XACK', stream, group, id)
      table.insert(trimmed, id)
    end
  end
end
return {entries, trimmed, last}
