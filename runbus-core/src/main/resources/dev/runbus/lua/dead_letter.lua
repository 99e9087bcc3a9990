-- Isolates a poison entry: copies it to the dead-letter stream with why and where it failed,
-- and acks it on its own stream, in one atomic step (docs/architecture.md, rule 4 a and b).
-- Does nothing if the entry is no longer pending in the group (another consumer acked or
-- dead-lettered it already), so an entry is dead-lettered at most once.
-- Order matters: a Lua script is not rolled back on error, so the copy is written before the
-- ack. If the copy fails, the entry stays pending and nothing is lost.
-- A client that reconnects can send the same call again after it ran (the reply was lost with the
-- connection). Each call carries a token, and what the script did is recorded under it for a while:
-- the same call sent again answers as the first did instead of "not pending", so that the move is
-- reported once. A different call finds the entry no longer pending, as before.
-- The entry's start record (record_starts.lua) goes with its ack, so the record stays bounded.
--
-- KEYS[1]  stream
-- KEYS[2]  dead-letter stream of the same topic
-- KEYS[3]  record of this call (string, built from the token; same hash slot)
-- ARGV[1]  group
-- ARGV[2]  entry id
-- ARGV[3]  topic
-- ARGV[4]  consumer that held it last
-- ARGV[5]  delivery count
-- ARGV[6]  reason
-- ARGV[7]  time, epoch milliseconds
-- ARGV[8]  how long to keep the record of this call, milliseconds
-- KEYS[4]  the partition's start record of the group (hash: entry id -> handler starts; same hash slot)
-- KEYS[5]  optional, ordered groups: the partition's lease (same hash slot)
-- ARGV[9]  with KEYS[5]: the lease's value for the caller, "<fencing token> <consumer>"
-- Returns  the dead letter's id; "trimmed" if the entry was gone from the stream (it is acked);
--          false if it was not pending; "fenced" if the caller no longer holds the lease (nothing done).
--          The same call sent again returns what the first returned.
local stream, dead, call, group, id = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
local earlier = redis.call('GET', call)
if earlier then
  return earlier
end
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[9] then
  return 'fenced'
end
if #redis.call('XPENDING', stream, group, id, id, 1) == 0 then
  return false
end
local entry = redis.call('XRANGE', stream, id, id)
if #entry == 0 then
  redis.call('XACK', stream, group, id)
  redis.call('HDEL', KEYS[4], id)
  redis.call('SET', call, 'trimmed', 'PX', ARGV[8])
  return 'trimmed'
end
local fields = {
  'dl:topic', ARGV[3], 'dl:stream_id', id, 'dl:group', group, 'dl:consumer', ARGV[4],
  'dl:deliveries', ARGV[5], 'dl:reason', ARGV[6], 'dl:at', ARGV[7]
}
-- unpack() is limited to about 8000 values: keep the first fields of an extremely wide entry and say so.
local original = entry[1][2]
local limit = 7900 - #fields
if #original > limit then
  table.insert(fields, 'dl:truncated')
  table.insert(fields, tostring(#original / 2))
  limit = limit - 2
end
for i = 1, math.min(#original, limit - (limit % 2)) do
  table.insert(fields, original[i])
end
local dead_id = redis.call('XADD', dead, '*', unpack(fields))
redis.call('XACK', stream, group, id)
redis.call('HDEL', KEYS[4], id)
redis.call('SET', call, dead_id, 'PX', ARGV[8])
return dead_id
