-- Acks finished entries of a partition of an unordered group and removes their start records, in one
-- step: a field of the start record lives exactly as long as its entry is pending, so the record stays
-- as small as the pending list. One script rather than XACK then HDEL: the two cannot be split by a
-- lost connection (an ack without its HDEL would leave a field nobody removes), and it is one round
-- trip either way. Running it twice is harmless.
--
-- KEYS[1]  stream
-- KEYS[2]  the partition's start record (hash: entry id -> handler starts)
-- ARGV[1]  group
-- ARGV[2..] entry ids
-- Returns  the number of entries acked (XACK's reply)
local ids = {}
for i = 2, #ARGV do
  ids[#ids + 1] = ARGV[i]
end
local acked = redis.call('XACK', KEYS[1], ARGV[1], unpack(ids))
redis.call('HDEL', KEYS[2], unpack(ids))
return acked
