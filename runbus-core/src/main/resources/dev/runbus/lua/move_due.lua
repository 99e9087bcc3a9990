-- Moves due entries of one partition's delay set into its stream, each in the same atomic step as
-- its removal from the set (docs/architecture.md, rule 8): every bus runs this at once, and an entry is appended
-- once, by whichever call takes it first. Due is judged by this server's clock (TIME).
-- An entry that cannot be appended (written by another program: not a MessagePack array of field,
-- value pairs, too many values, or refused by XADD) is set aside instead, as a dead letter of the
-- partition with its raw bytes, so that one bad entry never stops the set behind it. So is an id of
-- the set without fields in the entries hash (runbus writes and removes both in one script, so only
-- another program or a lost write leaves one): it is reported, not dropped unseen.
-- Safe to run twice (docs/architecture.md, rule 13): whatever one call moved or set aside has left the set, so the
-- same call again (re-sent after a reconnect) finds nothing of it. Only the first call's reply lists
-- what it set aside; the dead letters themselves stay.
--
-- KEYS[1]  delay set (sorted set: id -> due, epoch ms)
-- KEYS[2]  scheduled entries (hash: id -> MessagePack array of field, value, ...)
-- KEYS[3]  stream
-- KEYS[4]  dead-letter stream of the same partition
-- ARGV[1]  most entries to move in this call
-- ARGV[2]  topic (recorded on an entry set aside)
-- Returns  {moved, ms until the next entry is due (0: due now) or -1 when the set is empty, set aside,
--           {dead-letter id, {field, value, ...}, ...} of the entries set aside}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local moved, aside, dead = 0, 0, {}

local function set_aside(id, packed, reason)
  local fields = {'dl:topic', ARGV[2], 'dl:scheduled_id', id, 'dl:reason',
    'cannot move scheduled entry ' .. id .. ': ' .. reason, 'dl:at', tostring(now)}
  if packed then
    table.insert(fields, 'dl:raw')
    table.insert(fields, packed)
  end
  table.insert(dead, redis.call('XADD', KEYS[4], '*', unpack(fields)))
  table.insert(dead, fields)
  aside = aside + 1
end

for _, id in ipairs(due) do
  local packed = redis.call('HGET', KEYS[2], id)
  if packed then
    local ok, fields = pcall(cmsgpack.unpack, packed)
    if not ok or type(fields) ~= 'table' or #fields == 0 or #fields % 2 ~= 0 or #fields > 7900 then
      set_aside(id, packed, 'not a MessagePack array of field, value pairs (at most 7900 values)')
    else
      local added = redis.pcall('XADD', KEYS[3], '*', unpack(fields))
      if type(added) == 'table' and added.err then
        set_aside(id, packed, 'XADD refused it: ' .. added.err)
      else
        moved = moved + 1
      end
    end
    redis.call('HDEL', KEYS[2], id)
  else
    set_aside(id, false, 'its fields are missing (the delay set names it, the entries hash does not)')
  end
  redis.call('ZREM', KEYS[1], id)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then
  return {moved, -1, aside, dead}
end
return {moved, math.max(0, tonumber(first[2]) - now), aside, dead}
