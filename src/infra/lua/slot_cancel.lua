-- Give a place back: after a cancel SQL committed, or to undo a place SQL refused.
-- KEYS[1] = slot hash, KEYS[2] = customer key, KEYS[3] = idempotency key (or KEYS[2] again).
-- ARGV[1] = places (1 when absent).
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'r', tonumber(ARGV[1] or '1'))
return 1
