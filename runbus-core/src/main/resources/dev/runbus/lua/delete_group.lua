-- Deletes a consumer group from one partition: destroys it on the stream and removes the records the bus
-- keeps beside the stream for it, in one step, so that a group created again under the same name (at the
-- start of the stream) inherits no handler starts or retry wait of the deleted one, and no record written
-- between the two steps by a consumer of the old group survives them.
-- The lease and the fencing-token counter stay (ordered groups): the lease expires on its own, so a
-- holder paused now cannot start work beside a new owner, and the counter keeps the new group's tokens
-- above those the old holders may still act on (docs/architecture.md, "Leases and fencing").
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record of the group, unordered (hash: entry id -> handler starts; same hash slot)
-- KEYS[3]  the partition's start record of the group, ordered (same hash slot)
-- KEYS[4]  the partition's retry record of the group, ordered (same hash slot)
-- ARGV[1]  group
-- Returns  1 if the group existed on the stream, else 0
local destroyed = 0
if redis.call('TYPE', KEYS[1]).ok == 'stream' then
  destroyed = redis.call('XGROUP', 'DESTROY', KEYS[1], ARGV[1])
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return destroyed
