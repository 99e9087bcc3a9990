-- Reads new entries of a partition of an ordered group for its lease holder (XREADGROUP '>' without
-- BLOCK, which a script cannot do). Reading new entries through this fence, never with a plain
-- XREADGROUP, is what keeps a partition in order: a consumer that lost its lease (paused, cut off)
-- could otherwise still take new entries into its own pending list, where the next owner would find
-- them only after it had run newer ones. When nothing is new it answers the stream's last id, from
-- which the caller waits with a plain XREAD BLOCK, which takes nothing.
--
-- KEYS[1]  the partition's stream
-- KEYS[2]  the partition's lease
-- ARGV[1]  group
-- ARGV[2]  consumer (the lease holder)
-- ARGV[3]  the lease's value for the caller
-- ARGV[4]  count
-- Returns  { { {id, {field, value, ...}}, ... }, last id of the stream when nothing was read, or false },
--          or {-1} if the caller does not hold the lease (nothing read)
if redis.call('GET', KEYS[2]) ~= ARGV[3] then
  return {-1}
end
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[4], 'STREAMS', KEYS[1], '>')
local entries = {}
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
