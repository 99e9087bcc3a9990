-- Publishes a dead letter's original fields back to its topic's stream, addressed to the group
-- that gave up on it, and records the replay so that the same dead letter is never replayed twice.
-- The record keeps the token of the call that replayed it: a client that reconnects can send the
-- same call again after it ran (the reply was lost with the connection), and that call is told of
-- its own replay, not of a duplicate.
--
-- KEYS[1]  dead-letter stream
-- KEYS[2]  replay record (hash: dead letter id -> new stream id, and "<dead letter id>:token" -> token)
-- KEYS[3]  the topic's stream
-- ARGV[1]  dead letter id
-- ARGV[2]  token of this call
-- Returns  {1, new id} on success (also to the same call sent again), {0, earlier new id} if another
--          call replayed it already, {-1} if no such dead letter.
local dead, replayed, stream, dead_id, token = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
local earlier = redis.call('HGET', replayed, dead_id)
if earlier then
  if redis.call('HGET', replayed, dead_id .. ':token') == token then
    return {1, earlier}
  end
  return {0, earlier}
end
local entry = redis.call('XRANGE', dead, dead_id, dead_id)
if #entry == 0 then
  return {-1}
end
local fields, original, group = entry[1][2], {}, ''
for i = 1, #fields, 2 do
  local name = fields[i]
  if name == 'dl:group' then
    group = fields[i + 1]
  elseif string.sub(name, 1, 3) ~= 'dl:' and name ~= 'for_group' and name ~= 'attempts' and name ~= 'flow_charge' then
    table.insert(original, name)
    table.insert(original, fields[i + 1])
  end
end
table.insert(original, 'for_group')
table.insert(original, group)
local new_id = redis.call('XADD', stream, '*', unpack(original))
redis.call('HSET', replayed, dead_id, new_id, dead_id .. ':token', token)
return {1, new_id}
