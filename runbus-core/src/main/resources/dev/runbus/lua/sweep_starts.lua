-- Removes the fields of an unordered group's start record whose entries are no longer pending: one page of an
-- HSCAN of the record. A field lives as long as its entry is pending (ack.lua, dead_letter.lua and the others
-- remove it with the entry), but a few ways can leave one behind for good: a record that reached Redis after its
-- entry's ack (a connection reset makes the client write a failed command again, behind what it buffered since),
-- a first start written after Redis lost the entry with its data, a consumer of another program that acks with a
-- plain XACK. Nothing reads such a field; this keeps the record as small as the pending list.
-- Safe at any time: a field is removed only when, in the same script, its entry is not pending in the group.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record (hash: entry id -> handler starts; same hash slot)
-- ARGV[1]  group
-- ARGV[2]  HSCAN cursor ("0" to start)
-- ARGV[3]  fields to look at (HSCAN's COUNT)
-- Returns  { next cursor ("0" when the scan is done), fields removed }
local page = redis.call('HSCAN', KEYS[2], ARGV[2], 'COUNT', ARGV[3])
local stale = {}
for i = 1, #page[2], 2 do
  local id = page[2][i]
  local ok, pending = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if not ok then
    -- The stream or the group is gone (deleted, or Redis lost its data): no field of the record is pending.
    local removed = redis.call('HLEN', KEYS[2])
    redis.call('DEL', KEYS[2])
    return {'0', removed}
  end
  if #pending == 0 then
    stale[#stale + 1] = id
  end
end
if #stale > 0 then
  redis.call('HDEL', KEYS[2], unpack(stale))
end
return {page[1], #stale}
