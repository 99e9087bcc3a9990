-- Per-key concurrency caps of one partition of a flow-controlled topic (docs/flow-control-design.md): entries wait
-- in the partition's parked set, outside the stream, until their flow key has a free slot; an admitted entry is
-- added to the stream with a hold, a lease on one slot ending at an expiry on the Redis clock. A key's count is the
-- number of its holds, never a counter: a hold goes when its entry is released (acked, dead-lettered, retried) or
-- when it expired and a reap removes it, so nothing can drift and a dead worker's slots come back.
--
-- A hold counts until it is reaped: one whose expiry passed but that no reap removed yet still takes its slot, and
-- whoever renews or confirms it keeps it, since nobody else was admitted in its place. Only the reap frees the
-- slots of expired holds, and only it admits in their place.
--
-- Data, all in the partition's hash slot (every key declared):
--   parked   a stream of the parked entries, their fields as published plus flow_key and flow_seq; an entry let
--            into the stream also carries flow_parked, the id it first waited under (its time: when it was parked)
--   queue    sorted set, score 0, members key NUL seq NUL parked-id: each key's parked entries in order (by lex).
--            seq is 16 characters: the entry's lane (one digit, 0 the most urgent: 9 - its priority field, 5 without
--            one) and a 15-digit start tag (12 digits, then 3 of the partition's park count, so that equal tags keep
--            the order they came in), so that a key's entries sort by lane, then by start-time fair queueing
--            among the key's sub-keys (flow_sub, '' for none): an entry parked for sub-key u starts at max(the key's
--            virtual time, u's last finish tag) and finishes cost later, and the key's virtual time moves to the start
--            tag of each entry let in. So a key's sub-keys with entries waiting take turns, whatever each one's
--            backlog, and the entries of one sub-key keep their order (ties between sub-keys go in the order they
--            came). Entries parked by an older runbus carry a sequence number counted over the partition
--            in its place: in their key they sort behind newer entries until let in. A key admits the head of its most urgent lane unless a less urgent lane's head has aged past it:
--            of the lanes' heads, the one whose park time + lane * aging is smallest (aging in ms under NUL aging in
--            caps, the subscription's; one minute by default). Entries parked before lanes existed have lane 0
--   holds    sorted set, members key NUL stream-id, score the hold's expiry (ms, Redis clock)
--   held     sorted set, score 0, the same members: a key's holds counted by lex (ZLEXCOUNT)
--   caps     hash, flow key -> its cap where it differs from the default; and, under NUL cap and NUL lease, the
--            subscription's default cap and hold lease (ms), so that a publisher parks and admits without knowing
--            them. Until a subscription configured them every cap is 0: entries wait for a subscriber. Under
--            NUL group, the group whose acks release the holds: one group per flow-controlled topic.
--   seq      string, a count of the parked entries, whose last three digits order entries of equal start tags
--   tat      hash, flow key -> the theoretical arrival time of its rate limit (ms, Redis clock; GCRA): an entry of
--            the key may be admitted when tat - (burst - 1) * interval <= now, and its admission sets
--            tat = max(tat, now) + interval. Under NUL rate and NUL burst in caps: the interval (ms between two
--            admissions of a key in the long run, fractional) and the burst; without NUL rate, no rate limit. Under
--            NUL rate NUL key and NUL burst NUL key: a key's own rate (an interval of 0: none)
--   later    sorted set, flow key -> when its rate allows its next admission (ms, Redis clock): keys with parked
--            entries and room under their cap that only their rate holds back; a tick admits them when due. Under
--            NUL ticker and NUL ticker_until in caps: the consumer that schedules the ticks of this partition
--            (the others tick at their own pace only), until when
--   ready    sorted set, flow key -> its start tag: with a topic cap (NUL topic_cap in caps, the subscription's; NUL
--            topic_cap_set, one set at run time, in its place), the keys with parked entries and room under their
--            own cap that wait for a slot of the topic, whose entry to admit next (nextOf) is of the default lane, 5.
--            Within a lane, a free slot of the topic goes to the key with the smallest start tag (start-time fair
--            queueing): an admission of key k at start tag S moves the virtual time up to S and sets k's finish tag
--            to S + 1 / weight (its weight under NUL weight NUL k in caps, default 1); a key joining the set starts
--            at max(virtual time, its finish tag), so an idle key neither gains credit nor waits behind a backlog,
--            and each backlogged key gets slots in proportion to its weight
--   lanes    sorted set, the lanes other than 5 whose ready set holds a key (member and score the lane); the ready
--            sets of lanes 0-4 and 6-9 hold the keys whose next entry is of that lane, as ready holds lane 5's. Between
--            lanes the priorities are strict, with aging as within a key: of the first key of each lane, the one whose
--            next entry's rank (nextOf: park time + lane * aging) is smallest takes the slot, ties to the more urgent.
--            Each lane takes its turns apart: its own virtual time and finish tags (in tags, below)
--   tags     hash, flow key -> its finish tag; NUL vt: the virtual time (of lane 5; NUL vt NUL <lane> and
--            NUL lft NUL <lane> NUL <key> the virtual time and a key's finish tag of another lane). Under fair
--            shares by handler time (NUL fair_by in caps), a turn is as long as its handler ran: an admission
--            advances the tag by the key's mean handler time (NUL est NUL key; the topic's, NUL est, for a key not
--            measured yet) over its weight, and the release, told the time measured, corrects the tag by the
--            difference
-- A rate for the whole topic (NUL topic_rate and NUL topic_burst in caps, the subscription's; NUL topic_rate_set and
-- NUL topic_burst_set, one set at run time, in their place) is a GCRA like a key's, its theoretical arrival time
-- under NUL topic in tat: every admission of any key counts. With it, keys wait their turns in ready as under a
-- topic cap (with or without one), and while the rate holds the topic back, NUL topic waits in later, due when the
-- rate allows: a tick then lets the ready keys in.
-- A flow key never holds NUL (the publisher refuses it), so a key's members are exactly those in [key NUL, key \1).
--
-- KEYS[1] stream, KEYS[2] parked, KEYS[3] queue, KEYS[4] holds, KEYS[5] held, KEYS[6] caps, KEYS[7] seq, KEYS[8] tat,
-- KEYS[9] later, KEYS[10] ready, KEYS[11] tags, KEYS[12] lanes, KEYS[13..21] the ready sets of lanes 0-4 and 6-9;
-- fewer keys are refused with the error FLOWKEYS
-- ARGV[1] the operation; then, by operation:
--   configure ARGV[2] the default cap, ARGV[3] the hold's lease (ms), ARGV[4] the last key served by the previous
--            call ('' at first), ARGV[5] at most this many keys served, 2 or more: admits what the keys with
--            parked entries have room for, key by key in order (the key '' sorts first, so with 2 or more it is
--            never the last one served and '' stays free to mean "done"), ARGV[6] the subscribing group: refused
--            with the error FLOWGROUP <group> while another group is recorded and still exists on the stream,
--            ARGV[7] a key's rate limit as the interval between two admissions (ms, may be fractional; '' for none),
--            ARGV[8] its burst (admissions at once after an idle time, 1 or more), ARGV[9] the cap of the whole topic
--            (the holds of all keys together; '' for none), ARGV[10] how long (ms) waiting is worth one lane of
--            priority ('' for the default, a minute), ARGV[11] the topic's rate as the interval between two
--            admissions ('' for none), ARGV[12] its burst, ARGV[13] 'time' when the fair shares count handler time
--            (NUL fair_by in caps; an admission then charges its key's mean handler time, NUL est NUL key in tags,
--            the topic's under NUL est for a key not measured yet, and stamps it on the entry as flow_charge), ''
--            when they count declared costs, ARGV[14] 'unheld' for an ordered group (NUL unheld in caps): entries
--            are let in by their rates alone, without a hold, since the partition's owner runs them one at a time
--            and nothing confirms, renews or releases a hold
--            returns { the last key served ('' when every key was), stream ids admitted... }
--   park     ARGV[2] flow key, ARGV[3..] the entry's fields and values
--            returns { parked id, stream ids admitted... }
--   park_idmp ARGV[2] producer id, ARGV[3] its number for this park, ARGV[4] flow key, ARGV[5..] fields and values:
--            park, with XADD ... IDMP (Redis 8.6); run again with the same producer and number it parks nothing
--            more and returns { the first park's id }
--   release  ARGV[2] the caller (a consumer name; '' for none), ARGV[3] the ticker's lease (ms), ARGV[4..] flow key,
--            stream id, ...: holds given up (acked, dead-lettered, retried); frees and admits
--            returns { the next tick's delay, stream ids admitted... }: the delay (ms) until the first key in later
--            is due, for the ticker (the caller takes that role when nobody holds it); -1 for anyone else, or when
--            no key waits for its rate
--   release_timed ARGV[2] the caller, ARGV[3] the ticker's lease, ARGV[4..] flow key, stream id, the handler's time
--            (ms; '' when not measured), what the entry's admission charged (its flow_charge field; '' for none),
--            ...: release, and under fair shares by handler time each measured key's tags corrected by its handler's
--            time first; returns as release
--   tick     ARGV[2] the caller, ARGV[3] the ticker's lease (ms), ARGV[4] at most this many keys: admits the keys of
--            later that are due
--            returns { the next tick's delay (as release), stream ids admitted... }
--   renew    ARGV[2..] flow key, stream id, ...: the keep-alive of running entries
--            returns { stream ids whose hold was reaped (lost)... }
--   confirm  ARGV[2] group, ARGV[3..] flow key, stream id, handler starts recorded on it, ...: right before each
--            starts; an entry without a hold takes one if its key has room and its rate allows (counted by the
--            rate then, as an admission), else it is parked again (acked and
--            deleted from the stream, back at the head of its lane in its key's queue, at the key's present start tag
--            with the lowest tie, its flow_seq rewritten, its attempts field raised by the starts
--            it had, so that a poison that killed its consumers is still counted) and must not start; one no longer
--            in the stream (trimmed while pending) is acked and returned with them: it must not start either
--            returns { { confirmed stream ids... }, { parked again or gone... } }
--   reap     ARGV[2] at most this many expired holds removed; admits in their place
--            returns { holds reaped, stream ids admitted... }
--   rate     ARGV[2] flow key, ARGV[3] its rate's interval (ms, fractional; 0 for no rate; '' for the default),
--            ARGV[4] its burst: the key starts afresh under it (up to its burst at once) unless it had it already
--            returns { stream ids admitted... }
--   cap      ARGV[2] flow key, ARGV[3] its cap ('' for the default): a cap raised admits at once, one lowered
--            admits nothing until fewer hold
--            returns { stream ids admitted... }
--   topiccap ARGV[2] the topic's cap ('' for the subscription's): raised (or removed), it admits at once
--            returns { stream ids admitted... }
--   topicrate ARGV[2] the topic's rate as an interval (ms, fractional; '' for the subscription's), ARGV[3] its
--            burst: the topic starts afresh under it
--            returns { stream ids admitted... }
--   weight   ARGV[2] flow key, ARGV[3] its weight under a topic cap (> 0; '' for 1): its share of the topic's
--            slots against the other waiting keys' from its next admission on
--            returns { stream ids admitted... }
local stream, parked, queue, holds, held, caps, seqKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local tats, later, ready, tags = KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local lanes = KEYS[12]
if not KEYS[21] then
  -- A caller written against the keys of before lanes would leave the keys of other lanes waiting for good.
  return redis.error_reply('FLOWKEYS flow.lua takes 21 keys (stream, parked, queue, holds, held, caps, seq, tat, ' ..
    'later, ready, tags, lanes and the ready sets of lanes 0-4 and 6-9), given ' .. #KEYS)
end
-- The lane whose keys wait in ready (the default priority's, as before lanes, so that its keys stay where they are).
local READY_LANE = 5

-- The ready set of a lane (0 to 9).
local function readyOf(lane)
  if lane == READY_LANE then
    return ready
  end
  return KEYS[lane < READY_LANE and 13 + lane or 12 + lane]
end
local op = ARGV[1]
local NUL = '\0'
local CAP, LEASE, GROUP = NUL .. 'cap', NUL .. 'lease', NUL .. 'group'
local RATE, BURST, TICKER, TICKER_UNTIL = NUL .. 'rate', NUL .. 'burst', NUL .. 'ticker', NUL .. 'ticker_until'
local TOPIC_CAP, TOPIC_CAP_SET, WEIGHT, VT = NUL .. 'topic_cap', NUL .. 'topic_cap_set', NUL .. 'weight', NUL .. 'vt'
local AGING, DEFAULT_AGING = NUL .. 'aging', 60000
local TOPIC_RATE, TOPIC_BURST = NUL .. 'topic_rate', NUL .. 'topic_burst'
local TOPIC_RATE_SET, TOPIC_BURST_SET = NUL .. 'topic_rate_set', NUL .. 'topic_burst_set'
local TOPIC = NUL .. 'topic' -- the topic's field in tat and its member in later
local FAIR_BY = NUL .. 'fair_by' -- 'time': fair shares count handler time; absent: declared costs
-- '1': an ordered group's entries are let in by their rates with no hold (nothing confirms, renews or releases one)
local UNHELD = NUL .. 'unheld'
local EST = NUL .. 'est' -- in tags: the topic's mean handler time (ms); EST NUL key: a key's
-- In tags, a key's sub-keys' start-time fair queueing: SUB_VT NUL key, the key's virtual time (the start tag of its
-- entry let in last); SUB_FINISH NUL key NUL sub-key, the finish tag of the sub-key's entry parked last.
local SUB_VT, SUB_FINISH = NUL .. 'svt', NUL .. 'sft'
-- A start tag is written in 15 digits, 12 for the tag and 3 for the order of arrival among equal tags (the parked
-- ids, compared by lex, would not keep it: "-12" sorts before "-9"); beyond, the key's tags start over (subTagOf).
local SUB_TAG_MAX, TIE_DIGITS = 999999999999, 1000
-- How much of a key's mean handler time one measurement moves (an exponential moving average).
local EST_WEIGHT = 0.2
-- Admissions of one call without a topic cap, under a topic rate only: the rest waits for the next tick.
local RATE_ONLY_ROOM = 1000
-- Members read at the head of a lane to tell its age (entries put back to wait take the head with a new time).
local LANE_AGE_READ = 4

-- Whether group exists on the stream (a group deleted since it was recorded gives the topic up).
local function groupExists(group)
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  if type(groups) ~= 'table' or groups.err then
    return false -- no stream yet
  end
  for _, g in ipairs(groups) do
    for i = 1, #g, 2 do
      if g[i] == 'name' and g[i + 1] == group then
        return true
      end
    end
  end
  return false
end

-- Starts the topic's rate afresh (up to its burst at once) when the rate in force changes from before to after.
local function topicRateChanged(before, after)
  if before[1] ~= after[1] or before[2] ~= after[2] then
    redis.call('HDEL', tats, TOPIC)
    redis.call('ZREM', later, TOPIC)
  end
end

-- The topic's rate in force: the one set at run time, else the subscription's ({ interval, burst }, false: none).
local function topicRateInForce()
  local set = redis.call('HMGET', caps, TOPIC_RATE_SET, TOPIC_BURST_SET)
  if set[1] then
    return set
  end
  return redis.call('HMGET', caps, TOPIC_RATE, TOPIC_BURST)
end

if op == 'configure' then
  local owner = redis.call('HGET', caps, GROUP)
  if owner and owner ~= ARGV[6] and groupExists(owner) then
    return redis.error_reply('FLOWGROUP ' .. owner)
  end
  redis.call('HSET', caps, CAP, ARGV[2], LEASE, ARGV[3], GROUP, ARGV[6])
  if ARGV[7] == '' then
    redis.call('HDEL', caps, RATE, BURST)
  else
    redis.call('HSET', caps, RATE, ARGV[7], BURST, ARGV[8])
  end
  if ARGV[9] == '' then
    redis.call('HDEL', caps, TOPIC_CAP)
  else
    redis.call('HSET', caps, TOPIC_CAP, ARGV[9])
  end
  if (ARGV[10] or '') == '' then
    redis.call('HDEL', caps, AGING)
  else
    redis.call('HSET', caps, AGING, ARGV[10])
  end
  local rateBefore = topicRateInForce()
  if (ARGV[11] or '') == '' then
    redis.call('HDEL', caps, TOPIC_RATE, TOPIC_BURST)
  else
    redis.call('HSET', caps, TOPIC_RATE, ARGV[11], TOPIC_BURST, ARGV[12])
  end
  topicRateChanged(rateBefore, topicRateInForce())
  if (ARGV[13] or '') == 'time' then
    redis.call('HSET', caps, FAIR_BY, 'time')
  else
    redis.call('HDEL', caps, FAIR_BY)
  end
  if (ARGV[14] or '') == 'unheld' then
    redis.call('HSET', caps, UNHELD, '1')
  else
    redis.call('HDEL', caps, UNHELD)
  end
end
if op == 'topicrate' then
  local before = topicRateInForce()
  if ARGV[2] == '' then
    redis.call('HDEL', caps, TOPIC_RATE_SET, TOPIC_BURST_SET)
  else
    redis.call('HSET', caps, TOPIC_RATE_SET, ARGV[2], TOPIC_BURST_SET, ARGV[3])
  end
  topicRateChanged(before, topicRateInForce())
end
if op == 'topiccap' then
  if ARGV[2] == '' then
    redis.call('HDEL', caps, TOPIC_CAP_SET)
  else
    redis.call('HSET', caps, TOPIC_CAP_SET, ARGV[2])
  end
end
-- The subscription's settings, in one read: a call's fixed cost, paid by every park.
local conf = redis.call('HMGET', caps, LEASE, CAP, RATE, BURST, TOPIC_CAP_SET, TOPIC_CAP, AGING, TOPIC_RATE_SET,
  TOPIC_BURST_SET, TOPIC_RATE, TOPIC_BURST, FAIR_BY, UNHELD)
local lease = tonumber(conf[1] or '0')
local defaultCap = tonumber(conf[2] or '0')
local interval = tonumber(conf[3] or '0')
local tolerance = interval > 0 and (tonumber(conf[4] or '1') - 1) * interval or 0
-- The cap of the whole topic (the holds of every key together), -1 for none; not before a subscription configured.
local topicCap = tonumber(conf[5] or conf[6] or '-1')
-- Whether admitted entries go without a hold: an ordered group's, whose partition owners run them one at a time.
-- Nothing counts against a cap there, so a cap set on its topic or keys is let be (it would let in a cap's worth per
-- call and leave the rest waiting for a release that never comes).
local unheld = conf[13] == '1'
if lease <= 0 or unheld then
  topicCap = -1
end
local aging = tonumber(conf[7] or DEFAULT_AGING)
-- The topic's rate: its interval (0: none) and tolerance, the one set at run time in place of the subscription's;
-- not before a subscription configured.
local topicInterval, topicTolerance = 0, 0
do
  local rate, burst = conf[8], conf[9]
  if not rate then
    rate, burst = conf[10], conf[11]
  end
  if rate and lease > 0 then
    topicInterval = tonumber(rate)
    topicTolerance = (tonumber(burst or '1') - 1) * topicInterval
  end
end
-- Whether keys take turns for the topic (a topic cap or a topic rate), or each admits on its own.
local fair = topicCap >= 0 or topicInterval > 0
-- Whether their turns are counted in handler time (measured by the consumers) rather than in declared costs.
local byTime = fair and conf[12] == 'time'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function capOf(key)
  if lease <= 0 then
    return 0 -- not configured: nothing is admitted, overrides included
  end
  if unheld then
    return math.huge -- an ordered group's: no hold counts against a cap
  end
  local c = redis.call('HGET', caps, key)
  if c then
    return tonumber(c)
  end
  return defaultCap
end

local function holding(key)
  return redis.call('ZLEXCOUNT', held, '[' .. key .. NUL, '(' .. key .. '\1')
end

local function hold(key, id)
  local member = key .. NUL .. id
  redis.call('ZADD', holds, now + lease, member)
  redis.call('ZADD', held, 0, member)
end

local function unhold(key, id)
  local member = key .. NUL .. id
  redis.call('ZREM', holds, member)
  redis.call('ZREM', held, member)
end

-- The key's theoretical arrival time under its rate limit (GCRA), never before now.
local function tatOf(key)
  return math.max(tonumber(redis.call('HGET', tats, key) or '0'), now)
end

-- The key's rate: its interval and tolerance ((burst - 1) * interval), its own where set (fields NUL rate NUL key and
-- NUL burst NUL key of caps; an interval of 0 exempts the key), else the subscription's. An interval of 0: no rate.
local function rateOf(key)
  local own = redis.call('HMGET', caps, RATE .. NUL .. key, BURST .. NUL .. key)
  if own[1] then
    local i = tonumber(own[1])
    return i, (tonumber(own[2] or '1') - 1) * i
  end
  return interval, tolerance
end

-- Whether the key's rate lets one more entry start now; if it does, that entry is counted, cost times (its tat
-- moves on cost intervals): one allowed now may take its whole cost, the next waits until the cost is paid.
local function takeRate(key, cost)
  local i, tol = rateOf(key)
  if i <= 0 then
    return true
  end
  local tat = tatOf(key)
  if tat - tol > now then
    return false
  end
  -- tostring keeps 14 digits: 0.1 ms of a time
  redis.call('HSET', tats, key, string.format('%.17g', tat + i * (cost or 1)))
  return true
end

-- Whether the key has a rate at all.
local function limited(key)
  return (rateOf(key)) > 0
end

-- Files a key that only its rate holds back in later, due when its rate lets the next entry in.
local function waitForRate(key)
  local _, tol = rateOf(key)
  redis.call('ZADD', later, tatOf(key) - tol, key)
end

-- An entry's lane from its fields: 9 - its priority (0 to 9), 5 without a valid one.
local function laneOf(fields)
  for j = 1, #fields, 2 do
    if fields[j] == 'priority' and string.match(fields[j + 1], '^%d$') then
      return 9 - tonumber(fields[j + 1]) -- one digit, as WireFormat reads it
    end
  end
  return 5
end

-- The queue member of the key's entry to admit next, and its rank: of the heads of its lanes (one query per lane that holds
-- entries, and one more), the one whose park time + lane * aging is smallest, ties to the more urgent lane. So a
-- more urgent entry goes first unless a less urgent one has waited longer than the lanes between them are worth.
local function nextOf(key)
  local hi = '(' .. key .. '\1'
  local from = '[' .. key .. NUL
  local best, bestRank
  while true do
    local heads = redis.call('ZRANGEBYLEX', queue, from, hi, 'LIMIT', 0, LANE_AGE_READ)
    local member = heads[1]
    if not member then
      return best, bestRank
    end
    local lane = string.byte(member, #key + 2) - 48
    -- The lane's age is its oldest of the first few: an entry put back to wait heads its lane with a new park time,
    -- and must not make the lane look younger than the entries behind it.
    local oldest = math.huge
    for _, m in ipairs(heads) do
      if string.byte(m, #key + 2) - 48 == lane then
        oldest = math.min(oldest, tonumber(string.match(string.sub(m, #key + 19), '^%d+')))
      end
    end
    local rank = oldest + lane * aging
    if not best or rank < bestRank then
      best, bestRank = member, rank
    end
    if lane >= 9 or lane < 0 then
      return best, bestRank
    end
    from = '[' .. key .. NUL .. string.char(48 + lane + 1)
  end
end

-- An entry's cost from its fields: its cost field (a whole number, 1 to 1,000,000), 1 without a valid one.
local function costOf(fields)
  for j = 1, #fields, 2 do
    if fields[j] == 'cost' and string.match(fields[j + 1], '^%d%d?%d?%d?%d?%d?%d?$') then
      local c = tonumber(fields[j + 1])
      if c >= 1 and c <= 1000000 then
        return c
      end
    end
  end
  return 1
end

local function hasParked(key)
  return redis.call('ZRANGEBYLEX', queue, '[' .. key .. NUL, '(' .. key .. '\1', 'LIMIT', 0, 1)[1] ~= nil
end

-- An entry's flow sub-key from its fields ('' for none: the key's entries without one are one sub-key).
local function subOf(fields)
  for j = 1, #fields, 2 do
    if fields[j] == 'flow_sub' then
      return fields[j + 1]
    end
  end
  return ''
end

-- The start tag of a new entry of the key's sub-key sub: max(the key's virtual time, the sub-key's last finish
-- tag), so that each sub-key with entries waiting gets one turn in turn (by cost), a sub-key that was idle neither
-- gains credit nor waits behind another's backlog; and the sub-key's new finish tag, for parkedTag to record.
local function subTagOf(key, sub, cost)
  local t = redis.call('HMGET', tags, SUB_VT .. NUL .. key, SUB_FINISH .. NUL .. key .. NUL .. sub)
  -- At least 1: tag 0 heads a lane, where an entry put back to wait goes when nothing of its key was let in yet.
  local start = math.max(1, tonumber(t[1] or '0'), tonumber(t[2] or '0'))
  if start + cost > SUB_TAG_MAX then
    -- After 10^12 turns of a key that never drained: its tags start over (those waiting sort after the new ones,
    -- once), its virtual time too, so that the next parks count from there.
    start = 1
    redis.call('HDEL', tags, SUB_VT .. NUL .. key)
  end
  return start, start + cost
end

-- Records the finish tag of the key's sub-key sub, whose entry was just parked.
local function parkedTag(key, sub, finish)
  redis.call('HSET', tags, SUB_FINISH .. NUL .. key .. NUL .. sub, string.format('%d', finish))
end

-- An entry of key with member's start tag is let in: the key's virtual time moves up to it, and the sub-key's
-- finish tag is forgotten when this was its last entry (its next one starts at the virtual time all the same), so
-- that tags holds the sub-keys with entries waiting, not every sub-key ever seen.
local function admittedTag(key, member, fields)
  local digits = tonumber(string.sub(member, #key + 3, #key + 17))
  if not digits then
    return
  end
  local start = math.floor(digits / TIE_DIGITS)
  local vtField = SUB_VT .. NUL .. key
  if start > tonumber(redis.call('HGET', tags, vtField) or '0') then
    redis.call('HSET', tags, vtField, string.format('%d', start))
  end
  local finishField = SUB_FINISH .. NUL .. key .. NUL .. subOf(fields)
  local finish = tonumber(redis.call('HGET', tags, finishField) or '-1')
  if finish >= 0 and finish <= start + costOf(fields) then
    redis.call('HDEL', tags, finishField)
    if not hasParked(key) then
      -- Nothing of the key waits: its tags start over at the next park, and tags keeps no field of a key that
      -- drained (flow keys may be many, per user or per request).
      redis.call('HDEL', tags, vtField)
    end
  end
end

-- Admits up to max of the key's parked entries, in the order of nextOf, while it has room and its rate allows;
-- appends the stream ids to out and returns how many, and their costs summed. A key that has room and parked entries but must wait for its rate goes to later, due
-- when its rate allows.
local function admitOwn(key, out, max, charge)
  local room = math.min(capOf(key) - holding(key), max)
  local admitted, spent = 0, 0
  while room > 0 do
    local first = nextOf(key)
    if not first then
      return admitted, spent
    end
    local pid = string.sub(first, #key + 19) -- key NUL, 16 digits, NUL
    local entry = redis.call('XRANGE', parked, pid, pid)[1]
    local cost = entry and costOf(entry[2]) or 1
    if not takeRate(key, cost) then
      waitForRate(key)
      return admitted, spent
    end
    redis.call('ZREM', queue, first)
    if entry then
      redis.call('XDEL', parked, pid)
      local fields = entry[2]
      local stamped = false
      for j = 1, #fields, 2 do
        if fields[j] == 'flow_parked' then
          stamped = true
        end
      end
      if not stamped then -- when it first waited: an entry parked again keeps its first
        fields[#fields + 1] = 'flow_parked'
        fields[#fields + 1] = pid
      end
      if charge then -- what this admission charged its key, for the release to correct (an entry parked again is
        -- charged anew: its earlier admission's charge was corrected, or not, when it was given back)
        local at = nil
        for j = 1, #fields, 2 do
          if fields[j] == 'flow_charge' then
            at = j
          end
        end
        if not at then
          at = #fields + 1
          fields[at] = 'flow_charge'
        end
        fields[at + 1] = string.format('%.3f', charge)
      end
      local id = redis.call('XADD', stream, '*', unpack(fields))
      admittedTag(key, first, fields)
      if not unheld then
        hold(key, id)
      end
      out[#out + 1] = id
      room = room - 1
      admitted = admitted + 1
      spent = spent + cost
    end
  end
  return admitted, spent
end

-- The slots of the topic left free, under its cap; without one, what one call may admit under the topic's rate.
local function topicRoom()
  if topicCap < 0 then
    return RATE_ONLY_ROOM
  end
  return topicCap - redis.call('ZCARD', holds)
end

-- When the topic's rate lets the next admission in (ms, Redis clock); now or earlier when it does now.
local function topicDue()
  if topicInterval <= 0 then
    return now
  end
  return math.max(tonumber(redis.call('HGET', tats, TOPIC) or '0'), now) - topicTolerance
end

-- Counts an admission of cost against the topic's rate.
local function takeTopicRate(cost)
  if topicInterval > 0 then
    local tat = math.max(tonumber(redis.call('HGET', tats, TOPIC) or '0'), now)
    redis.call('HSET', tats, TOPIC, string.format('%.17g', tat + topicInterval * (cost or 1)))
  end
end

-- Files the topic in later, due when its rate lets the next admission in: a tick gives the ready keys their turns.
local function waitForTopicRate()
  redis.call('ZADD', later, topicDue(), TOPIC)
end

-- Each lane keeps its own start-time fair queueing: its virtual time, and each key's finish tag in it (lane 5's
-- under the names of before lanes: VT and the key's own name), so that a key's turns in one lane neither credit nor
-- charge it in another, and turns taken in one lane do not move another's virtual time.
local function vtField(lane)
  if lane == READY_LANE then
    return VT
  end
  return VT .. NUL .. lane
end

local function finishField(lane, key)
  if lane == READY_LANE then
    return key
  end
  return NUL .. 'lft' .. NUL .. lane .. NUL .. key
end

-- Where a key joining lane's ready set starts: max(the lane's virtual time, its finish tag there).
local function startTagIn(lane, key)
  local t = redis.call('HMGET', tags, vtField(lane), finishField(lane, key))
  return math.max(tonumber(t[1] or '0'), tonumber(t[2] or '0'))
end

-- The lane of the key's entry to admit next (nextOf) and its rank; nil when nothing of the key waits.
local function headOf(key)
  local member, rank = nextOf(key)
  if not member then
    return nil
  end
  return string.byte(member, #key + 2) - 48, rank
end

-- The lane a key waiting for the topic is filed in: its most urgent waiting entry's (one read); nil when nothing of
-- the key waits. The sets are an index of who may go next: the rank of each set's first key is read when the sets are
-- compared (nextReady), so a key whose less urgent entry has aged past its more urgent ones still ranks by it.
local function laneOfKey(key)
  local first = redis.call('ZRANGEBYLEX', queue, '[' .. key .. NUL, '(' .. key .. '\1', 'LIMIT', 0, 1)[1]
  if not first then
    return nil
  end
  return string.byte(first, #key + 2) - 48
end

-- The lanes other than ready's that hold keys, in order (most urgent first).
local function otherLanes()
  local out = {}
  for _, l in ipairs(redis.call('ZRANGE', lanes, 0, -1)) do
    out[#out + 1] = tonumber(l)
  end
  return out
end

-- The lane whose ready set holds key, or nil.
local function filedLane(key)
  if redis.call('ZSCORE', ready, key) then
    return READY_LANE
  end
  for _, lane in ipairs(otherLanes()) do
    if redis.call('ZSCORE', readyOf(lane), key) then
      return lane
    end
  end
  return nil
end

local function fileReady(lane, tag, key)
  redis.call('ZADD', readyOf(lane), tag, key)
  if lane ~= READY_LANE then
    redis.call('ZADD', lanes, lane, lane)
  end
end

local function unfileReady(lane, key)
  local set = readyOf(lane)
  redis.call('ZREM', set, key)
  if lane ~= READY_LANE and redis.call('ZCARD', set) == 0 then
    redis.call('ZREM', lanes, lane)
  end
end

-- Empties every lane's ready set; returns the keys they held.
local function takeAllReady()
  local waiting = redis.call('ZRANGE', ready, 0, -1)
  for _, lane in ipairs(otherLanes()) do
    for _, key in ipairs(redis.call('ZRANGE', readyOf(lane), 0, -1)) do
      waiting[#waiting + 1] = key
    end
    redis.call('DEL', readyOf(lane))
  end
  redis.call('DEL', ready, lanes)
  return waiting
end

-- Whether any key waits for a slot or turn of the topic.
local function anyReady()
  return redis.call('ZCARD', ready) > 0 or redis.call('ZCARD', lanes) > 0
end

-- The key whose turn it is, its start tag and the lane it is filed in (nil when none waits): the first key by start
-- tag of each lane's ready set, and of those the one whose next entry ranks first (park time + lane * aging), ties
-- to the more urgent lane; so a more urgent key goes first unless a less urgent one has waited longer than the lanes
-- between them are worth. With every waiting key in one lane (all of the default priority, mostly), its first.
local function nextReady()
  local others = otherLanes()
  local candidates, placed = {}, false -- every lane in order, ready's in its place among the others
  for _, lane in ipairs(others) do
    if not placed and lane > READY_LANE then
      candidates[#candidates + 1] = READY_LANE
      placed = true
    end
    candidates[#candidates + 1] = lane
  end
  if not placed then
    candidates[#candidates + 1] = READY_LANE
  end
  local best, bestTag, bestLane, bestRank
  for _, lane in ipairs(candidates) do
    local first = redis.call('ZRANGE', readyOf(lane), 0, 0, 'WITHSCORES')
    if first[1] then
      if #others == 0 then
        return first[1], tonumber(first[2]), lane
      end
      local _, rank = headOf(first[1])
      rank = rank or -math.huge -- nothing of it waits: taken at once, and so dropped from the set
      if not best or rank < bestRank then
        best, bestTag, bestLane, bestRank = first[1], tonumber(first[2]), lane, rank
      end
    elseif lane ~= READY_LANE then
      redis.call('ZREM', lanes, lane)
    end
  end
  return best, bestTag, bestLane
end

local function weightOf(key)
  return tonumber(redis.call('HGET', caps, WEIGHT .. NUL .. key) or '1')
end

-- Under fair shares by handler time: what an admission of key charges it, its mean handler time (ms); for a key not
-- measured yet the topic's, and 1 ms before anything was measured.
local function estimateOf(key)
  local est = redis.call('HMGET', tags, EST .. NUL .. key, EST)
  return tonumber(est[1] or est[2] or '1')
end

-- Under fair shares by handler time, a handler of key ran measured ms where its admission charged charged ms (0 for
-- an entry that took its slot at its start, charged nothing): the key's finish tag moves by the difference over its
-- weight, and its start tag if it waits among the ready keys follows it, so that its next turns come as late as its
-- real use asks; the key's and the topic's means learn the measurement.
local function correct(key, measured, charged)
  local delta = (measured - charged) / weightOf(key)
  -- The finish tag of the lane the key waits in now, or else of the default lane: the lane of the admission this
  -- corrects is not told, and mostly it is the one the key waits in again.
  local lane = filedLane(key)
  local field = finishField(lane or READY_LANE, key)
  local finish = tonumber(redis.call('HGET', tags, field) or '0') + delta
  redis.call('HSET', tags, field, string.format('%.17g', finish))
  if lane then
    -- Filed again as markReady files a key: at its finish tag, or the virtual time if that is later (a key whose
    -- handlers were quicker than charged gains no credit from before the present)
    redis.call('ZADD', readyOf(lane), 'XX', string.format('%.17g', startTagIn(lane, key)), key)
  end
  local est = redis.call('HMGET', tags, EST .. NUL .. key, EST)
  local own = tonumber(est[1] or est[2] or measured)
  local all = tonumber(est[2] or measured)
  redis.call('HSET', tags, EST .. NUL .. key, string.format('%.17g', own + (measured - own) * EST_WEIGHT),
    EST, string.format('%.17g', all + (measured - all) * EST_WEIGHT))
end

-- With a topic cap: files a key with parked entries and room under its own cap among the ready ones of the lane of
-- its most urgent entry, at its start tag there (a key already filed in that lane keeps its tag; one filed in another, whose
-- next entry's lane changed since, say a more urgent entry was parked, moves and starts afresh in its new lane).
local function markReady(key)
  if holding(key) >= capOf(key) then
    return
  end
  local lane = laneOfKey(key)
  if not lane then
    return
  end
  local at = filedLane(key)
  if at == lane then
    return
  end
  if at then
    unfileReady(at, key)
  end
  fileReady(lane, startTagIn(lane, key), key)
end

-- With a topic cap: gives its free slots to the ready keys, one entry at a time, smallest start tag first. A key
-- that cannot take its turn (no parked entry or room left; its rate holds it back: then it goes to later) leaves
-- the set and is filed again when that changes.
local function admitFair(out)
  local room = topicRoom()
  local turns, most = 0, room + 100 -- every free slot, and up to 100 turns of keys that cannot take theirs
  while room > 0 and turns < most do
    turns = turns + 1
    local key, start, lane = nextReady()
    if not key then
      return
    end
    if topicDue() > now then
      waitForTopicRate()
      return
    end
    unfileReady(lane, key)
    local charge = byTime and estimateOf(key) or nil
    local admitted, spent = admitOwn(key, out, 1, charge)
    if admitted > 0 then
      takeTopicRate(spent)
      room = room - 1
      local finish = start + (charge or spent) / weightOf(key) -- a turn is as long as its cost, or its handler time
      redis.call('HSET', tags, vtField(lane), string.format('%.17g', start), finishField(lane, key),
        string.format('%.17g', finish))
      if holding(key) < capOf(key) then
        local next = laneOfKey(key)
        if next == lane then
          fileReady(lane, finish, key)
        elseif next then
          fileReady(next, startTagIn(next, key), key)
        end
      end
    end
  end
  if topicCap < 0 and room == 0 and anyReady() then
    redis.call('ZADD', later, now, TOPIC) -- this call's share admitted under the topic's rate: the next tick goes on
  end
end

-- Admits what the key has room for: all of it without a topic cap; with one, the key waits its turn among the
-- ready keys for the topic's free slots.
local function admit(key, out)
  if not fair then
    admitOwn(key, out, math.huge)
  else
    markReady(key)
    admitFair(out)
  end
end

local function park(key, seq, fields)
  local pid = redis.call('XADD', parked, '*', unpack(fields))
  redis.call('ZADD', queue, 0, key .. NUL .. seq .. NUL .. pid)
  return pid
end

if op == 'configure' then
  if not fair then
    takeAllReady() -- no topic cap: no key waits for one (each key admits on its own below)
  end
  -- With a topic cap, every key served is filed among the ready ones before any is let in: admitted one by one, the
  -- first key would take all of the topic's free slots before the others were waiting for them.
  local out, last, served = { '' }, ARGV[4], 0
  while served < tonumber(ARGV[5]) do
    local from = last == '' and '-' or ('[' .. last .. '\1')
    local member = redis.call('ZRANGEBYLEX', queue, from, '+', 'LIMIT', 0, 1)[1]
    if not member then
      last = ''
      break
    end
    last = string.sub(member, 1, string.find(member, NUL, 1, true) - 1)
    if not fair then
      admitOwn(last, out, math.huge)
    else
      markReady(last)
    end
    served = served + 1
  end
  if fair and last == '' then
    admitFair(out) -- once every key is filed: a call's keys must not take the slots before the next call's wait
  end
  out[1] = last
  return out
end

if op == 'park' or op == 'park_idmp' then
  local at = op == 'park' and 2 or 4
  local key = ARGV[at]
  local fields = {}
  for i = at + 1, #ARGV do
    fields[#fields + 1] = ARGV[i]
  end
  -- Its place among the key's waiting entries: its lane, then its start tag among the key's sub-keys.
  local sub = subOf(fields)
  local start, finish = subTagOf(key, sub, costOf(fields))
  local tie = redis.call('INCR', seqKey) % TIE_DIGITS -- equal tags in the order they came (but every 1000th)
  local seq = string.char(48 + laneOf(fields)) .. string.format('%015d', start * TIE_DIGITS + tie)
  fields[#fields + 1] = 'flow_key'
  fields[#fields + 1] = key
  fields[#fields + 1] = 'flow_seq'
  fields[#fields + 1] = seq
  local pid
  if op == 'park_idmp' then
    pid = redis.call('XADD', parked, 'IDMP', ARGV[2], ARGV[3], '*', unpack(fields))
    -- A park run again with the same producer and number (re-sent after its reply was lost) is answered the first
    -- one's id, whose entry carries another seq (the first park moved its sub-key's finish tag past it), or is gone
    -- (let in since): it parks nothing more.
    local entry = redis.call('XRANGE', parked, pid, pid)[1]
    local fresh = false
    if entry then
      for j = 1, #entry[2], 2 do
        if entry[2][j] == 'flow_seq' and entry[2][j + 1] == seq then
          fresh = true
        end
      end
    end
    if not fresh then
      return { pid }
    end
    redis.call('ZADD', queue, 0, key .. NUL .. seq .. NUL .. pid)
  else
    pid = park(key, seq, fields)
  end
  parkedTag(key, sub, finish)
  local out = { pid }
  admit(key, out)
  return out
end

-- The delay until the first key in later is due, for the caller if it is (or now becomes) the partition's ticker;
-- -1 for anyone else, or when no key waits for its rate.
local function nextTick(caller, tickerLease)
  local first = redis.call('ZRANGE', later, 0, 0, 'WITHSCORES')
  if caller == '' or not first[1] then
    return -1
  end
  local ticker = redis.call('HGET', caps, TICKER)
  if ticker ~= caller and tonumber(redis.call('HGET', caps, TICKER_UNTIL) or '0') > now then
    return -1
  end
  redis.call('HSET', caps, TICKER, caller, TICKER_UNTIL, now + tickerLease)
  return math.max(0, math.ceil(tonumber(first[2]) - now))
end

if op == 'release' or op == 'release_timed' then
  local out, keys = { 0 }, {}
  local stride = op == 'release' and 2 or 4
  for i = 4, #ARGV, stride do
    unhold(ARGV[i], ARGV[i + 1])
    keys[ARGV[i]] = true
    if stride == 4 and byTime and ARGV[i + 2] ~= '' then
      correct(ARGV[i], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3] ~= '' and ARGV[i + 3] or '0'))
    end
  end
  for key in pairs(keys) do
    admit(key, out)
  end
  out[1] = nextTick(ARGV[2], tonumber(ARGV[3]))
  return out
end

if op == 'tick' then
  local out = { 0 }
  local due = redis.call('ZRANGEBYSCORE', later, '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
  for _, key in ipairs(due) do
    redis.call('ZREM', later, key)
    if key == TOPIC then
      admitFair(out) -- the topic's rate lets the ready keys in again
    else
      admit(key, out)
    end
  end
  out[1] = nextTick(ARGV[2], tonumber(ARGV[3]))
  return out
end

if op == 'renew' then
  local lost = {}
  for i = 2, #ARGV, 2 do
    local member = ARGV[i] .. NUL .. ARGV[i + 1]
    if redis.call('ZSCORE', holds, member) then
      redis.call('ZADD', holds, now + lease, member)
    else
      lost[#lost + 1] = ARGV[i + 1]
    end
  end
  return lost
end

if op == 'confirm' then
  local group = ARGV[2]
  local confirmed, again = {}, {}
  for i = 3, #ARGV, 3 do
    local key, id, starts = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
    local member = key .. NUL .. id
    local held = redis.call('ZSCORE', holds, member)
    local room, topicFree, entry, cost -- asked only of an entry without a slot: most come with theirs
    if not held then
      room = holding(key) < capOf(key)
      topicFree = not fair or (topicRoom() > 0 and topicDue() <= now)
      entry = redis.call('XRANGE', stream, id, id)[1]
      cost = entry and costOf(entry[2]) or 1
    end
    if held then
      redis.call('ZADD', holds, now + lease, member)
      confirmed[#confirmed + 1] = id
    elseif room and topicFree and takeRate(key, cost) then
      -- Reached the stream without a slot (a delayed or retried entry, or one whose slot expired before it
      -- started): it takes one if its key and the topic have room, and is counted by the key's rate as an
      -- admission is.
      hold(key, id)
      takeTopicRate(cost)
      confirmed[#confirmed + 1] = id
    else
      redis.call('XACK', stream, group, id)
      redis.call('XDEL', stream, id)
      if entry then
        local fields, seqAt, attempts = entry[2], nil, nil
        for j = 1, #fields, 2 do
          if fields[j] == 'flow_seq' then
            seqAt = j + 1
          elseif fields[j] == 'attempts' then
            attempts = j + 1
          end
        end
        if starts > 0 then
          if attempts then
            fields[attempts] = tostring((tonumber(fields[attempts]) or 0) + starts)
          else
            fields[#fields + 1] = 'attempts'
            fields[#fields + 1] = tostring(starts)
          end
        end
        -- It was its turn (or it never waited: a delayed or retried entry): it goes first in its lane, at the key's
        -- present start tag with the lowest tie, ahead of what waits (an old tag of its own would sort behind the
        -- newer ones once the key's tags started over).
        local vtNow = tonumber(redis.call('HGET', tags, SUB_VT .. NUL .. key) or '0')
        local seq = string.char(48 + laneOf(fields)) .. string.format('%015d', vtNow * TIE_DIGITS)
        if seqAt then
          fields[seqAt] = seq
        else
          fields[#fields + 1] = 'flow_seq'
          fields[#fields + 1] = seq
        end
        park(key, seq, fields)
        if room and not topicFree then
          -- held back by the topic's cap or rate: it takes its turn when a slot of the topic frees or the rate allows
          markReady(key)
          if topicDue() > now then
            waitForTopicRate()
          end
        elseif room and limited(key) then
          waitForRate(key) -- held back by its rate, not its cap: a tick lets it in when due
        end
      end
      again[#again + 1] = id
    end
  end
  return { confirmed, again }
end

if op == 'reap' then
  local expired = redis.call('ZRANGEBYSCORE', holds, '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
  local keys = {}
  for _, member in ipairs(expired) do
    redis.call('ZREM', holds, member)
    redis.call('ZREM', held, member)
    keys[string.sub(member, 1, string.find(member, NUL, 1, true) - 1)] = true
  end
  local out = { #expired }
  for key in pairs(keys) do
    admit(key, out)
  end
  return out
end

if op == 'rate' then
  local before = redis.call('HMGET', caps, RATE .. NUL .. ARGV[2], BURST .. NUL .. ARGV[2])
  local changed
  if ARGV[3] == '' then
    changed = before[1] ~= false
    redis.call('HDEL', caps, RATE .. NUL .. ARGV[2], BURST .. NUL .. ARGV[2])
  else
    changed = before[1] ~= ARGV[3] or before[2] ~= ARGV[4]
    redis.call('HSET', caps, RATE .. NUL .. ARGV[2], ARGV[3], BURST .. NUL .. ARGV[2], ARGV[4])
  end
  if changed then -- the rate it has, set again (an override applied once more), changes nothing
    redis.call('HDEL', tats, ARGV[2]) -- the key starts afresh under its new rate: up to its burst at once
    redis.call('ZREM', later, ARGV[2]) -- filed again by the admission below if the new rate holds it back
  end
  local out = {}
  admit(ARGV[2], out)
  return out
end

if op == 'weight' then
  if ARGV[3] == '' then
    redis.call('HDEL', caps, WEIGHT .. NUL .. ARGV[2])
  else
    redis.call('HSET', caps, WEIGHT .. NUL .. ARGV[2], ARGV[3])
  end
  local out = {}
  admit(ARGV[2], out)
  return out
end

if op == 'topiccap' or op == 'topicrate' then
  local out = {}
  if not fair then
    -- No topic cap any more: every key that waited for the topic takes what it has room for.
    for _, key in ipairs(takeAllReady()) do
      admitOwn(key, out, math.huge)
    end
  else
    admitFair(out)
  end
  return out
end

if op == 'cap' then
  if ARGV[3] == '' then
    redis.call('HDEL', caps, ARGV[2])
  else
    redis.call('HSET', caps, ARGV[2], ARGV[3])
  end
  local out = {}
  admit(ARGV[2], out)
  return out
end

return redis.error_reply('flow.lua: unknown operation ' .. tostring(op))
