-- Lists the soonest scheduled entries of one partition's delay set, with their fields.
-- An entry another program wrote (an id without fields, or fields that are not a MessagePack array of
-- field, value strings) is listed with the reason and no fields instead of failing the whole call, so
-- that the caller can skip and report it: one foreign entry must not hide the rest of the set.
-- Reads only: safe to run twice.
--
-- KEYS[1]  delay set (sorted set: id -> due, epoch ms)
-- KEYS[2]  scheduled entries (hash: id -> MessagePack array of field, value, ...)
-- ARGV[1]  most entries to list
-- Returns  { {id, due, {field, value, ...}}, ... }, soonest first; an entry that cannot be read as
--          {id, due, {}, reason}
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local out = {}

local function readable(fields)
  if type(fields) ~= 'table' or #fields == 0 or #fields % 2 ~= 0 then
    return false
  end
  for _, v in ipairs(fields) do
    if type(v) ~= 'string' then
      return false
    end
  end
  return true
end

for i = 1, #ids, 2 do
  local packed = redis.call('HGET', KEYS[2], ids[i])
  if not packed then
    table.insert(out, {ids[i], ids[i + 1], {}, 'its fields are missing'})
  else
    local ok, fields = pcall(cmsgpack.unpack, packed)
    if ok and readable(fields) then
      table.insert(out, {ids[i], ids[i + 1], fields})
    else
      table.insert(out, {ids[i], ids[i + 1], {}, 'not a MessagePack array of field, value strings'})
    end
  end
end
return out
