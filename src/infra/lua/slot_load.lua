-- Load a slot from SQL unless already loaded. KEYS[1] = the slot hash.
-- ARGV = remaining, status, closed reason, starts_at (ms), expire at (unix seconds).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'st', ARGV[2], 'why', ARGV[3], 'at', ARGV[4])
redis.call('EXPIREAT', KEYS[1], ARGV[5])
return 1
