-- Records that a handler starts on entries of a partition of an unordered group, before it starts:
-- one more start for each id in the partition's start record. The reclaimer and the re-read of a
-- consumer's own pending entries count an entry's deliveries from this record (starts + 1), not from
-- the pending list, which also counts reads and claims whose reply was lost and that no handler
-- started on (DESIGN.md rule 13).
-- Sent without waiting, this call can reach Redis after the entry's ack (the acker sends from the
-- client's I/O thread, ahead of writes other threads queued there; or a NOSCRIPT answer sends it
-- again): an id no longer pending in the group is therefore skipped, so a start recorded after its
-- entry's ack removed the field never comes back as a field nobody removes.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record of the group (hash: entry id -> handler starts; same hash slot)
-- ARGV[1]  group
-- ARGV[2..] entry ids
-- Returns  the number of ids recorded (those still pending)
local recorded = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if #redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1) > 0 then
    redis.call('HINCRBY', KEYS[2], id, 1)
    recorded = recorded + 1
  end
end
return recorded
