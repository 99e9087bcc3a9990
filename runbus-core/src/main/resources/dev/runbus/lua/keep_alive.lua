-- Refreshes the claim of entries a consumer is still working on: XCLAIM to itself with JUSTID
-- resets the idle time without counting a delivery, so the reclaimer leaves them alone.
-- Only entries still owned by this consumer are refreshed; taking back an entry another consumer
-- has taken over would let two consumers work on it unknowingly.
--
-- KEYS[1]  stream
-- ARGV[1]  group
-- ARGV[2]  consumer
-- ARGV[3..] entry ids
-- Returns  the ids this consumer no longer owns (lost to another consumer, or acked meanwhile).
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local kept, lost = {}, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if #redis.call('XPENDING', stream, group, id, id, 1, consumer) == 1 then
    table.insert(kept, id)
  else
    table.insert(lost, id)
  end
end
if #kept > 0 then
  -- unpack() must be the last argument to expand fully, so JUSTID goes into the table.
  table.insert(kept, 'JUSTID')
  redis.call('XCLAIM', stream, group, consumer, 0, unpack(kept))
end
return lost
