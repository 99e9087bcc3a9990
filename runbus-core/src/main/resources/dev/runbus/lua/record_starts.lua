-- Records that a handler starts on entries of a partition of an unordered group, before it starts:
-- one more start for each id in the partition's start record. The reclaimer and the re-read of a
-- consumer's own pending entries count an entry's deliveries from this record (starts + 1), not from
-- the pending list, which also counts reads and claims whose reply was lost and that no handler
-- started on (docs/architecture.md, "When Redis itself misbehaves").
-- Entries a consumer read as new get their first start without this script: a plain HSET of the value
-- FIRST below (Scripts.recordFirstStarts), since their delivery is the pending list's first. This
-- script records the others: entries re-read, claimed or taken back, whose delivery it reads here.
-- Sent without waiting, a record could reach Redis after the entry's ack (the acker sends from the
-- client's I/O thread, ahead of writes other threads queued there), so the consumer sends an entry's
-- ack behind its record, or after its reply (Acker). An id no longer pending in the group is skipped
-- all the same: another consumer may have claimed and acked the entry meanwhile, a NOSCRIPT answer
-- sends this call again from the I/O thread, and a start recorded after the ack would be a field
-- nobody removes.
-- Safe to run twice: a call whose reply was lost with its connection is sent again by the client.
-- At most one start is recorded per delivery the pending list counts, so the second run of the same
-- call finds its delivery counted already and changes nothing. The field holds both numbers in one
-- integer, starts + 2^32 * (the pending list's delivery count at the last start recorded), so that a
-- plain HINCRBY of the field (what a consumer written against the wire format does) still adds one
-- start; readers take the starts as the value modulo 2^32.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record of the group (hash: entry id -> starts, as above; same hash slot)
-- ARGV[1]  group
-- ARGV[2..] entry ids, in stream order (the client sorts them): the first and the last bound the span below
-- Returns  the number of ids recorded (those still pending and not counted for this delivery yet)
--
-- Which ids are pending, and at which delivery, is read with one XPENDING over the span of the ids (a call's ids
-- come from one read, so the span holds few others): a call per id cost twice as much, most of it in turning
-- each reply into a Lua table. Where the span holds more pending entries than the reply's bound (many consumers
-- reading the same stream), an id the reply left out is looked up on its own.
local SHIFT = 4294967296
-- Hash reads and writes go in slices of this many ids, one call each (Lua's unpack takes about 8,000 values).
local SLICE = 1000
-- The value of a first start at the first delivery, the common case, written without formatting it again.
local FIRST = string.format('%d', 1 + SHIFT)

-- A call without ids records nothing: the subscription sends one at start to put the script in the node's cache.
if #ARGV < 2 then
  return 0
end

-- The lowest and highest id of the call: the client sends them in stream order, so that the script need not parse
-- every id to compare them (that was a fifth of the call's time).
local low, high = ARGV[2], ARGV[#ARGV]
local bound = 2 * (#ARGV - 1) + 16
local span = redis.call('XPENDING', KEYS[1], ARGV[1], low, high, bound)
local pendingAt = {}
for _, e in ipairs(span) do
  pendingAt[e[1]] = e[4]
end
local cut = #span >= bound

local ids = {}
local deliveries = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local delivery = pendingAt[id]
  if delivery == nil and cut then
    local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
    if #p > 0 then
      delivery = p[1][4]
    end
  end
  if delivery ~= nil then
    ids[#ids + 1] = id
    -- Beyond 2^20 deliveries the mark stops growing (Lua numbers are exact to 2^53): an entry read that
    -- often without a handler start is not one whose starts matter any more.
    deliveries[#ids] = math.min(tonumber(delivery), 1048576)
  end
end
local recorded = 0
for from = 1, #ids, SLICE do
  local to = math.min(from + SLICE - 1, #ids)
  local values = redis.call('HMGET', KEYS[2], unpack(ids, from, to))
  local writes = {}
  for i = from, to do
    local old = values[i - from + 1]
    if not old and deliveries[i] == 1 then
      writes[#writes + 1] = ids[i]
      writes[#writes + 1] = FIRST
    else
      local value = tonumber(old) or 0
      if math.floor(value / SHIFT) ~= deliveries[i] then
        writes[#writes + 1] = ids[i]
        writes[#writes + 1] = string.format('%d', value % SHIFT + 1 + deliveries[i] * SHIFT)
      end
    end
  end
  if #writes > 0 then
    redis.call('HSET', KEYS[2], unpack(writes))
    recorded = recorded + #writes / 2
  end
end
return recorded
