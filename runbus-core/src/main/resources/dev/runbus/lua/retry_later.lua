-- Retries a failed entry later (docs/architecture.md, rule 8): in one atomic step, acks it and schedules a copy
-- in the partition's delay set, addressed to the group that failed it (for_group) and carrying the
-- attempts made so far (attempts), so that the poison threshold counts across reschedules. A crash
-- before the call leaves the entry pending (taken over after min-idle, as any failed entry); after it,
-- the copy is scheduled and the entry acked: nothing lost, nothing doubled.
-- Does nothing unless the entry is still pending under the calling consumer: not if it was acked,
-- dead-lettered, or this same call sent again after a reconnect, nor if another consumer took it over
-- while the caller's handler ran (the caller paused past min-idle: the entry is the new owner's to
-- decide, and acking it here would run the message again after the new owner's success). So an entry
-- is rescheduled at most once per delivery, and only by its owner. The entry's start record
-- (record_starts.lua) goes with its ack: the copy is a new entry, and carries its attempts itself.
--
-- KEYS[1]  stream
-- KEYS[2]  delay set of the same partition
-- KEYS[3]  scheduled entries of the same partition
-- ARGV[1]  group
-- ARGV[2]  entry id
-- ARGV[3]  delay, ms
-- ARGV[4]  attempts made so far, the failed one included
-- ARGV[5]  id of the scheduled copy
-- ARGV[6]  the calling consumer
-- KEYS[4]  the partition's start record of the group (hash: entry id -> handler starts; same hash slot)
-- KEYS[5]  optional, ordered groups: the partition's lease (same hash slot)
-- ARGV[7]  with KEYS[5]: the lease's value for the caller, "<fencing token> <consumer>"
-- Returns  the copy's due time, epoch ms (server clock); "trimmed" if the entry was gone from the
--          stream (it is acked); false if it was not pending under the caller; "fenced" if the caller
--          no longer holds the lease (nothing done)
local stream, group, id = KEYS[1], ARGV[1], ARGV[2]
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[7] then
  return 'fenced'
end
if #redis.call('XPENDING', stream, group, id, id, 1, ARGV[6]) == 0 then
  return false
end
local entry = redis.call('XRANGE', stream, id, id)
if #entry == 0 then
  redis.call('XACK', stream, group, id)
  redis.call('HDEL', KEYS[4], id)
  return 'trimmed'
end
local original, fields = entry[1][2], {}
for i = 1, #original, 2 do
  local name = original[i]
  -- flow_charge: what the first admission charged under fair shares by handler time; the copy is charged anew
  if name ~= 'attempts' and name ~= 'for_group' and name ~= 'flow_charge' then
    table.insert(fields, name)
    table.insert(fields, original[i + 1])
  end
end
table.insert(fields, 'attempts')
table.insert(fields, ARGV[4])
table.insert(fields, 'for_group')
table.insert(fields, group)
local t = redis.call('TIME')
local due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
redis.call('HSET', KEYS[3], ARGV[5], cmsgpack.pack(fields))
redis.call('ZADD', KEYS[2], due, ARGV[5])
redis.call('XACK', stream, group, id)
redis.call('HDEL', KEYS[4], id)
return tostring(due)
