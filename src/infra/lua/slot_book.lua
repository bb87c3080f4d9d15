-- Take a booking's places of a slot (a party takes several at once). The customer (and the idempotency key, when given) is recorded so a
-- repeat goes to SQL for the first booking instead of being told the slot is full. The marks hold
-- when they were set (ms): a twin answered "seen" waits a moment for a booking still on its way to SQL.
-- KEYS[1] = slot hash, KEYS[2] = customer key, KEYS[3] = idempotency key (or KEYS[2] again).
-- ARGV[1] = now (ms), ARGV[2] = expire at (unix seconds), ARGV[3] = places (1 when absent).
-- Returns {"ok", remaining}, {"full"|"closed"|"started", remaining, reason}, {"seen"}, {"load"}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'load'}
end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return {'seen'}
end
local s = redis.call('HMGET', KEYS[1], 'r', 'st', 'why', 'at')
local r = tonumber(s[1])
if s[2] ~= 'OPEN' then
  return {'closed', r, s[3] or ''}
end
if tonumber(ARGV[1]) >= tonumber(s[4]) then
  return {'started', r, ''}
end
local places = tonumber(ARGV[3] or '1')
if r < places then
  return {'full', math.max(r, 0), ''}
end
redis.call('HINCRBY', KEYS[1], 'r', -places)
redis.call('SET', KEYS[2], ARGV[1], 'EXAT', ARGV[2])
redis.call('SET', KEYS[3], ARGV[1], 'EXAT', ARGV[2])
return {'ok', r - places}
