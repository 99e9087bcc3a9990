-- Refreshes the claim of entries a consumer is still working on: XCLAIM to itself with JUSTID
-- resets the idle time without counting a delivery, so the reclaimer leaves them alone.
-- Only entries still owned by this consumer are refreshed; taking back an entry another consumer
-- has taken over would let two consumers work on it unknowingly. Entries deleted from the stream
-- meanwhile are not claimed (Redis 7 would drop them silently) but acked and reported, as the read
-- and reclaim scripts do with them (docs/architecture.md, rule 7): their handler's outcome can no longer apply.
--
-- KEYS[1]  stream
-- KEYS[2]  optional, unordered groups: the partition's start record (same hash slot); a trimmed
--          entry's record goes with its ack
-- ARGV[1]  group
-- ARGV[2]  consumer
-- ARGV[3..] entry ids
-- Returns  { ids this consumer no longer owns, ids whose entries were deleted from the stream (now acked) }
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local kept, lost, trimmed = {}, {}, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if #redis.call('XPENDING', stream, group, id, id, 1, consumer) == 0 then
    table.insert(lost, id)
  elseif #redis.call('XRANGE', stream, id, id) == 0 then
    redis.call('XACK', stream, group, id)
    if KEYS[2] then
      redis.call('HDEL', KEYS[2], id)
    end
    table.insert(trimmed, id)
  else
    table.insert(kept, id)
  end
end
if #kept > 0 then
  -- unpack() must be the last argument to expand fully, so JUSTID goes into the table.
  table.insert(kept, 'JUSTID')
  redis.call('XCLAIM', stream, group, consumer, 0, unpack(kept))
end
return {lost, trimmed}
