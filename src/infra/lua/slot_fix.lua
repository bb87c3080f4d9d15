-- Reconciliation's repair of a slot: shift remaining by the measured drift, and set the status.
-- KEYS[1] = slot hash. ARGV = delta remaining, status, closed reason.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'r', ARGV[1])
redis.call('HSET', KEYS[1], 'st', ARGV[2], 'why', ARGV[3])
return 1
