-- Records that the head entry of a partition of an ordered group failed and waits for its retry:
-- the retry record holds the entry's id and expires when the retry is due, on the Redis clock. The
-- claim that delivers the entry again (ordered_claim.lua with HEAD) refuses while the record lives,
-- whoever owns the partition by then: a partition handed over in a rebalance does not retry early
-- (docs/architecture.md, rule 15). Running it twice only moves the due time by the second call's delay.
--
-- KEYS[1]  the partition's lease
-- KEYS[2]  the partition's retry record
-- ARGV[1]  the lease's value for the caller
-- ARGV[2]  the entry's id
-- ARGV[3]  the delay, milliseconds (at least 1)
-- Returns  1, or -1 if the caller does not hold the lease (nothing done)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
