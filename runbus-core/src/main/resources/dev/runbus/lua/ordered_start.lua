-- Records that a handler starts on an entry of a partition of an ordered group, before it starts:
-- the one start record of the partition holds the id of the entry whose handler started last. The
-- next catching up (after a crash, a hand-over, or a retry in place) counts one delivery for the
-- pending entries up to it, once (ordered_claim.lua), so a delivery counts when a handler starts on
-- an entry, never when a claim was merely sent (docs/architecture.md, rule 13). Setting the same id twice is
-- harmless.
--
-- KEYS[1]  the partition's lease
-- KEYS[2]  the partition's start record
-- ARGV[1]  the lease's value for the caller
-- ARGV[2]  the entry's id
-- Returns  1, or -1 if the caller does not hold the lease (nothing done)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
redis.call('SET', KEYS[2], ARGV[2])
return 1
