-- Count a place SQL booked without the gate (the gate answered "seen" or "closed" and SQL, the
-- authority, booked anyway: a double submit whose twin lost in SQL, a slot reopened meanwhile).
-- Without this Redis would keep offering that place, and every taker would be refused by SQL.
-- KEYS[1] = slot hash, KEYS[2] = customer key, KEYS[3] = idempotency key (or KEYS[2] again).
-- ARGV[1] = expire at (unix seconds), ARGV[2] = places (1 when absent).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'r', -tonumber(ARGV[2] or '1'))
redis.call('SET', KEYS[2], '1', 'EXAT', ARGV[1])
redis.call('SET', KEYS[3], '1', 'EXAT', ARGV[1])
return 1
