-- Lists the soonest scheduled entries of one partition's delay set, with their fields.
--
-- KEYS[1]  delay set (sorted set: id -> due, epoch ms)
-- KEYS[2]  scheduled entries (hash: id -> MessagePack array of field, value, ...)
-- ARGV[1]  most entries to list
-- Returns  { {id, due, {field, value, ...}}, ... }, soonest first
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #ids, 2 do
  local packed = redis.call('HGET', KEYS[2], ids[i])
  if packed then
    table.insert(out, {ids[i], ids[i + 1], cmsgpack.unpack(packed)})
  end
end
return out
