-- Reconciliation's repair: shift a warehouse hash by the drift measured against SQL. Deltas,
-- not absolute values, so holds that land between measuring and repairing are not lost.
-- KEYS[1] = the warehouse hash. ARGV = delta available, delta locked, delta sold.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'a', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'l', ARGV[2])
redis.call('HINCRBY', KEYS[1], 's', ARGV[3])
return 1
