-- Claims pending entries of a partition of an ordered group for its lease holder, in id order:
-- a new owner first takes over what earlier owners left pending, and an owner retrying a failed
-- entry in place delivers it again this way. Entries deleted from the stream while pending are
-- acked and returned as trimmed, never claimed (DESIGN.md rule 7).
--
-- Which claims count a delivery: only the first COUNTED entries of this call (XCLAIM); the others are
-- claimed with JUSTID, which keeps their delivery count. A partition runs one entry at a time, so of
-- what an earlier owner left pending only the oldest can have been cut off mid-handler; the rest were
-- read ahead and never started (or ran to the end, their ack lost), and counting them at every hand-over
-- would dead-letter good entries after a few rebalances. The first entry of a catch-up and an entry
-- retried in place are counted, so the poison threshold holds across owners and retries.
--
-- KEYS[1]  the partition's stream
-- KEYS[2]  the partition's lease
-- ARGV[1]  group
-- ARGV[2]  consumer (the lease holder)
-- ARGV[3]  the lease's value for the caller
-- ARGV[4]  first id to look at (inclusive; "-" for the start)
-- ARGV[5]  ids to skip: "" or the last id of the previous page, which equals ARGV[4]
-- ARGV[6]  count
-- ARGV[7]  last id to look at (inclusive; "+" for the end)
-- ARGV[8]  COUNTED: how many of the first entries claimed count a delivery (0 or more)
-- Returns  { { {id, {field, value, ...}, deliveries, previous owner}, ... }, {trimmed id, ...},
--          last id looked at or false }, or {-1} if the caller does not hold the lease (nothing done)
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
if redis.call('GET', KEYS[2]) ~= ARGV[3] then
  return {-1}
end
local count, counted = tonumber(ARGV[6]), tonumber(ARGV[8])
local entries, trimmed, last = {}, {}, false
for _, p in ipairs(redis.call('XPENDING', stream, group, ARGV[4], ARGV[7], count + 1)) do
  local id = p[1]
  if id ~= ARGV[5] and #entries + #trimmed < count then
    last = id
    local entry = redis.call('XRANGE', stream, id, id)
    if #entry == 0 then
      redis.call('XACK', stream, group, id)
      table.insert(trimmed, id)
    elseif #entries < counted then
      redis.call('XCLAIM', stream, group, consumer, 0, id)
      table.insert(entries, {id, entry[1][2], p[4] + 1, p[2]})
    else
      redis.call('XCLAIM', stream, group, consumer, 0, id, 'JUSTID')
      table.insert(entries, {id, entry[1][2], p[4], p[2]})
    end
  end
end
return {entries, trimmed, last}
