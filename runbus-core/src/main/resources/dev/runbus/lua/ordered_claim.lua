-- Claims pending entries of a partition of an ordered group for its lease holder, in id order:
-- a new owner first takes over what earlier owners left pending, and an owner retrying a failed
-- entry in place delivers it again this way. Entries deleted from the stream while pending are
-- acked and returned as trimmed, never claimed (docs/architecture.md, rule 7).
--
-- Which claims count a delivery: the delivery count is the number of handler starts, the coming one
-- included (docs/architecture.md, rule 13). A new entry's first delivery is counted by the read. Before each
-- handler starts, its holder records the entry's id in the start record (ordered_start.lua). So of
-- what is pending, exactly the entries up to that id can have started since they were last counted:
-- those are claimed with XCLAIM, which counts one more delivery, and the record is then marked
-- counted ('=' before the id) so that this script run twice (its reply lost, or re-sent after a
-- reconnect) counts nothing twice. The others were read ahead and never started, or are counted
-- already: they are claimed with JUSTID, which keeps their delivery count.
--
-- The head of the partition may be a failed entry waiting for its retry: its due time lives in the
-- retry record (ordered_retry_at.lua), on the Redis clock, and binds whoever owns the partition. When
-- HEAD is set and the first pending entry is the one waiting, nothing is claimed and the script
-- answers how long it still waits.
--
-- KEYS[1]  the partition's stream
-- KEYS[2]  the partition's lease
-- KEYS[3]  the partition's start record ("<id>" uncounted, "=<id>" counted)
-- KEYS[4]  the partition's retry record (the id of the entry waiting for its retry; expires when due)
-- ARGV[1]  group
-- ARGV[2]  consumer (the lease holder)
-- ARGV[3]  the lease's value for the caller
-- ARGV[4]  first id to look at (inclusive; "-" for the start)
-- ARGV[5]  ids to skip: "" or the last id of the previous page, which equals ARGV[4]
-- ARGV[6]  count
-- ARGV[7]  last id to look at (inclusive; "+" for the end)
-- ARGV[8]  HEAD: 1 when the first id looked at is the partition's head (a first page, or a retry)
-- Returns  { { {id, {field, value, ...}, deliveries, previous owner}, ... }, {trimmed id, ...},
--          last id looked at or false }; {-1} if the caller does not hold the lease (nothing done);
--          {-2, milliseconds} if the head waits that long still for its retry (nothing done)
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
if redis.call('GET', KEYS[2]) ~= ARGV[3] then
  return {-1}
end
local count = tonumber(ARGV[6])
local pending = redis.call('XPENDING', stream, group, ARGV[4], ARGV[7], count + 1)
if ARGV[8] == '1' then
  local waiting = redis.call('GET', KEYS[4])
  local head = pending[1] and pending[1][1]
  if head == ARGV[5] then
    head = pending[2] and pending[2][1]
  end
  if waiting and waiting == head then
    local wait = redis.call('PTTL', KEYS[4])
    if wait > 0 then
      return {-2, wait}
    end
  end
end

local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local started = redis.call('GET', KEYS[3])
local upto = nil
if started and string.sub(started, 1, 1) ~= '=' then
  local ms, seq = parse(started)
  if ms then
    upto = {ms, seq}
  end
end
local function counts(id)
  if not upto then
    return false
  end
  local ms, seq = parse(id)
  return ms < upto[1] or (ms == upto[1] and seq <= upto[2])
end

local entries, trimmed, last = {}, {}, false
for _, p in ipairs(pending) do
  local id = p[1]
  if id ~= ARGV[5] and #entries + #trimmed < count then
    last = id
    local entry = redis.call('XRANGE', stream, id, id)
    if #entry == 0 then
      redis.call('XACK', stream, group, id)
      table.insert(trimmed, id)
    elseif counts(id) then
      redis.call('XCLAIM', stream, group, consumer, 0, id)
      table.insert(entries, {id, entry[1][2], p[4] + 1, p[2]})
    else
      redis.call('XCLAIM', stream, group, consumer, 0, id, 'JUSTID')
      table.insert(entries, {id, entry[1][2], p[4], p[2]})
    end
  end
end
-- The record is spent once this claim reached its id, or found nothing more pending: a later page or
-- claim must not count the same start again. A full page that stops short of it counts the rest up to it
-- now, and spends it too: once this owner's handlers start on the page, its own starts overwrite the record,
-- and the next page would count nothing of what the previous owner started (entries claimed early here are
-- claimed again by the next page, with JUSTID, their count kept).
if upto and last and last ~= started and counts(last) and #entries + #trimmed >= count then
  local from = '(' .. last
  while true do
    local rest = redis.call('XPENDING', stream, group, from, started, 1000)
    for _, p in ipairs(rest) do
      if #redis.call('XRANGE', stream, p[1], p[1]) > 0 then -- a deleted one is left for its page to report
        redis.call('XCLAIM', stream, group, consumer, 0, p[1])
      end
    end
    if #rest < 1000 then
      break
    end
    from = '(' .. rest[#rest][1]
  end
  redis.call('SET', KEYS[3], '=' .. started)
elseif upto and (not last or last == started or not counts(last) or #entries + #trimmed < count) then
  redis.call('SET', KEYS[3], '=' .. started)
end
return {entries, trimmed, last}
