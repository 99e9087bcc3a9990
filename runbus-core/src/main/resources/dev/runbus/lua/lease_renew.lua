-- Renews a partition's lease for its holder, or releases it (lease time 0).
--
-- KEYS[1]  the partition's lease
-- ARGV[1]  the lease's value for the holder
-- ARGV[2]  lease time, milliseconds; 0 to release it
-- Returns  1 if the caller held the lease (renewed or released), 0 if it did not (nothing done)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
