-- Settle one order line held by stock_reserve: C = confirm (locked -> sold), X = release or
-- expiry (locked -> available), U = undo a hold SQL refused (like X, and the order is forgotten).
-- A line unknown here, or already settled, moves nothing.
-- KEYS[1] = the warehouse hash, KEYS[2] = the order's key. ARGV[1] = C|X|U, ARGV[2] = warehouse.
local rec = redis.call('GET', KEYS[2])
if not rec then
  return 0
end
local wh, q, st = string.match(rec, '^(%d+):(%d+):(%u)$')
if st ~= 'R' or wh ~= ARGV[2] then
  return 0
end
if ARGV[1] == 'U' then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], wh .. ':' .. q .. ':' .. ARGV[1], 'KEEPTTL')
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
q = tonumber(q)
redis.call('HINCRBY', KEYS[1], 'l', -q)
if ARGV[1] == 'C' then
  redis.call('HINCRBY', KEYS[1], 's', q)
else
  redis.call('HINCRBY', KEYS[1], 'a', q)
end
return 1
