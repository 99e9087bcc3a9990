-- Moves due entries of one partition's delay set into its stream, each in the same atomic step as
-- its removal from the set (DESIGN.md rule 8): every bus runs this at once, and an entry is appended
-- once, by whichever call takes it first. A call that fails part-way (a Lua script is not rolled back)
-- has appended and removed the entries before the failure, and left the rest scheduled: nothing is
-- appended twice, nothing lost. Due is judged by this server's clock (TIME).
--
-- KEYS[1]  delay set (sorted set: id -> due, epoch ms)
-- KEYS[2]  scheduled entries (hash: id -> MessagePack array of field, value, ...)
-- KEYS[3]  stream
-- ARGV[1]  most entries to move in this call
-- Returns  {moved, ms until the next entry is due (0: due now), or -1 when the set is empty}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local moved = 0
for _, id in ipairs(due) do
  local packed = redis.call('HGET', KEYS[2], id)
  if packed then
    redis.call('XADD', KEYS[3], '*', unpack(cmsgpack.unpack(packed)))
    redis.call('HDEL', KEYS[2], id)
    moved = moved + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then
  return {moved, -1}
end
return {moved, math.max(0, tonumber(first[2]) - now)}
