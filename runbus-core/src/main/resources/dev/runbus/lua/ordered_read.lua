-- Reads new entries of a partition of an ordered group for its lease holder (XREADGROUP '>' without
-- BLOCK, which a script cannot do). Reading new entries through this fence, never with a plain
-- XREADGROUP, is what keeps a partition in order: a consumer that lost its lease (paused, cut off)
-- could otherwise still take new entries into its own pending list, where the next owner would find
-- them only after it had run newer ones. When nothing is new it answers the stream's last id, from
-- which the caller waits with a plain XREAD BLOCK, which takes nothing.
--
-- A read whose reply was lost (a timeout, or a connection that dropped: the client re-sends it, and
-- it runs twice) leaves entries pending under the caller that it never saw; reading past them would
-- run later entries of their keys first. So the caller names the last id it knows (read or claimed),
-- and entries pending under it after that id are answered first, instead of new ones: the same
-- entries again for a re-sent read, the lost ones for the next (docs/architecture.md, rule 13).
--
-- KEYS[1]  the partition's stream
-- KEYS[2]  the partition's lease
-- ARGV[1]  group
-- ARGV[2]  consumer (the lease holder)
-- ARGV[3]  the lease's value for the caller
-- ARGV[4]  count
-- ARGV[5]  the last id the caller knows of this partition ("-" for none)
-- Returns  { { {id, {field, value, ...}, deliveries}, ... }, last id of the stream when nothing was
--          read, or false }, or {-1} if the caller does not hold the lease (nothing read)
if redis.call('GET', KEYS[2]) ~= ARGV[3] then
  return {-1}
end
local entries = {}
local from = ARGV[5] == '-' and '-' or '(' .. ARGV[5]
for _, p in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], from, '+', ARGV[4], ARGV[2])) do
  local entry = redis.call('XRANGE', KEYS[1], p[1], p[1])
  if #entry == 0 then
    redis.call('XACK', KEYS[1], ARGV[1], p[1]) -- deleted while pending: nothing to run (rule 7)
  else
    table.insert(entries, {p[1], entry[1][2], p[4]})
  end
end
if #entries > 0 then
  return {entries, false}
end
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[4], 'STREAMS', KEYS[1], '>')
if reply and reply[1] then
  for _, entry in ipairs(reply[1][2]) do
    table.insert(entries, {entry[1], entry[2]})
  end
end
if #entries > 0 then
  return {entries, false}
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
return {entries, last[1] and last[1][1] or '0-0'}
