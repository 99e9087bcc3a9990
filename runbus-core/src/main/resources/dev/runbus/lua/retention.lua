-- Trims one partition's stream to the oldest entry a consumer group still needs (docs/architecture.md, rule 7:
-- retention never trims an entry a group has not acknowledged). For each group of the stream its
-- bound is the oldest of: its oldest pending entry (XPENDING summary), and the id just after its
-- last-delivered-id (entries not yet read). The stream is trimmed (XTRIM MINID, exact) to the oldest
-- bound of all groups, and never past "now - retention age" on the Redis clock nor into the newest n
-- entries, so that young or recent entries stay even when every group is done with them (what that
-- costs: below). A stream without groups is never trimmed: nobody has
-- said which entries it no longer needs. Reads and trim are one script, so no group can read or
-- claim between them; the script touches one key, one cluster slot.
--
-- Ids are compared as decimal strings (by length, then by characters; Redis never writes leading
-- zeros) and incremented as strings: a sequence number can exceed what a Lua number holds exactly.
-- XINFO GROUPS is read as field/value pairs by name: Redis 6.2 lacks the entries-read and lag
-- fields of Redis 7.
--
-- KEYS[1]  the partition's stream
-- ARGV[1]  retention age, milliseconds; 0 keeps nothing for its age alone
-- ARGV[2]  'trim' to trim, 'peek' to only compute (the inspector)
-- ARGV[3]  entries to keep at the end of the stream whatever their age (the newest n); 0 or absent: none
-- ARGV[4]  'acked' when the server has XTRIM … ACKED (Redis 8.2 and later): then a trim without ARGV[3] uses it
--          behind a pending entry that holds the stream back (below)
-- Returns  { entries trimmed, the trim bound ('' when nothing may be trimmed), the group holding
--            retention back (the one with the oldest bound; '' without groups), that group's bound }
local stream, age, mode = KEYS[1], tonumber(ARGV[1]), ARGV[2]

local function less(a, b) -- decimal strings without leading zeros
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

local function parse(id)
  local dash = string.find(id, '-', 1, true)
  if not dash then
    return id, '0'
  end
  return string.sub(id, 1, dash - 1), string.sub(id, dash + 1)
end

local function older(a, b) -- stream ids: milliseconds, then sequence
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then
    return less(am, bm)
  end
  return less(as, bs)
end

local function increment(digits)
  local i = #digits
  while i >= 1 and string.sub(digits, i, i) == '9' do
    i = i - 1
  end
  if i == 0 then
    return '1' .. string.rep('0', #digits)
  end
  return string.sub(digits, 1, i - 1) .. string.char(string.byte(digits, i) + 1) .. string.rep('0', #digits - i)
end

local MAX = '18446744073709551615'
local function after(id) -- the id just after: the first entry the group has not read
  local ms, seq = parse(id)
  if seq ~= MAX then
    return ms .. '-' .. increment(seq)
  end
  if ms ~= MAX then
    return increment(ms) .. '-0'
  end
  return id -- the last possible id: keep it, which is only more cautious
end

if redis.call('TYPE', stream).ok ~= 'stream' then
  return {0, '', '', ''}
end

-- The id before which entries are older than the retention age, on the Redis clock: nil with no age, false when
-- no entry can be that old yet.
local function ageBound()
  if age <= 0 then
    return nil
  end
  local t = redis.call('TIME')
  local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - age
  if cutoff <= 0 then
    return false
  end
  return string.format('%.0f', cutoff) .. '-0'
end

-- unreadFrom: the oldest entry some group has not read yet; nothing from there on can be acknowledged by all.
local holder, bound, heldByPending, unreadFrom = '', nil, false, nil
for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
  local info = {}
  for i = 1, #g, 2 do
    info[g[i]] = g[i + 1]
  end
  local mine, pending = after(info['last-delivered-id']), false
  if unreadFrom == nil or older(mine, unreadFrom) then
    unreadFrom = mine
  end
  if tonumber(info['pending']) > 0 then
    local oldest = redis.call('XPENDING', stream, info['name'])[2]
    if oldest and older(oldest, mine) then
      mine, pending = oldest, true
    end
  end
  if bound == nil or older(mine, bound) then
    holder, bound, heldByPending = info['name'], mine, pending
  end
end
if bound == nil then
  return {0, '', '', ''}
end

local trimTo = bound
local byAge = ageBound()
if byAge == false then
  return {0, '', holder, bound}
end
if byAge and older(byAge, trimTo) then
  trimTo = byAge
end

-- Keeping the newest n: trim only the entries that both the bound above and "all but the newest n"
-- would trim, i.e. the oldest min(a, b), where a = entries older than trimTo and b = length - n. Redis
-- cannot count the entries of an id range nor list ids without their fields, so the script reads
-- entries, but from the old end and only as many as it then trims: the oldest entries older than trimTo,
-- at most min(b, n). Fewer than that (none included): they are all of a (a <= b), trimmed by MINID
-- trimTo. Exactly b:
-- a >= b, and the trim stops after the b-th. Only when n < b <= a (a backlog longer than twice n) does
-- it read the newest n as well, to find where they begin; that round then trims at least n. A round
-- reads at most twice the entries it trims (it used to read the newest n on every round, payloads
-- included: about 1 s of Redis time per round and partition for 10,000 entries of 2 KB).
local keep = tonumber(ARGV[3] or '0')
if keep > 0 then
  local b = redis.call('XLEN', stream) - keep
  if b <= 0 or trimTo == '0-0' or trimTo == '0-1' then
    return {0, '', holder, bound}
  end
  local limit = math.min(b, keep)
  local oldest = redis.call('XRANGE', stream, '-', '(' .. trimTo, 'COUNT', limit)
  if #oldest == b then
    trimTo = after(oldest[b][1]) -- the b-th oldest is trimmed, the newest n are not
  elseif #oldest == limit then -- keep < b and at least keep entries are older than trimTo
    local newest = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', keep)
    local nth = newest[#newest][1]
    if older(nth, trimTo) then
      trimTo = nth
    end
  end
end

local trimmed = 0
if mode == 'trim' then
  trimmed = redis.call('XTRIM', stream, 'MINID', trimTo)
end

-- Redis 8.2 and later, trimming without keeping the newest n, when an entry still pending is what holds the stream
-- back (the bound above is a group's oldest pending entry, and the retention age does not trim past it): XTRIM …
-- ACKED then also trims the entries behind it that every group has read and acknowledged (rule 7 still holds: the
-- server keeps whatever any group has pending or not read), so an entry stuck pending holds back only itself. Only
-- then: ACKED checks each entry against every group, several times the cost of the cut at one id above, which is
-- all a stream needs when nothing is stuck. It walks the entries below its MINID, so that bound is also the oldest
-- entry some group has not read (none from there on can be acknowledged by all): a group that lags far behind does
-- not make every round walk its whole backlog. A server that refuses ACKED (older than 8.2: a replica of an older
-- version promoted) has had the trim above.
if ARGV[4] == 'acked' and mode == 'trim' and keep == 0 and heldByPending and trimTo == bound then
  local ackedTo = unreadFrom
  if byAge and older(byAge, ackedTo) then
    ackedTo = byAge
  end
  if older(bound, ackedTo) then
    local n = redis.pcall('XTRIM', stream, 'MINID', ackedTo, 'ACKED')
    if type(n) == 'number' then
      trimmed = trimmed + n
    end
  end
end
return {trimmed, trimTo, holder, bound}
