-- Take qty code ids (ids only: code text never reaches Redis) from a voucher SKU's pool.
-- KEYS[1] = pool (a set of ids), KEYS[2] = meta hash (more = SQL has ids past the cursor, n = the
-- pool's size as the scripts left it), KEYS[3] = the order's key. ARGV[1] = qty, ARGV[2] = order record lifetime (s), ARGV[3] = low mark.
-- Returns {"ok", low, id...}, {"no", pool size}, {"refill"}, {"seen"} or {"load"}.
if redis.call('EXISTS', KEYS[2]) == 0 then
  return {'load'}
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'seen'}
end
local q = tonumber(ARGV[1])
local n = redis.call('SCARD', KEYS[1])
-- A pool lost alone (code_pool.lua) is "not loaded": the caller loads it afresh from SQL.
if pool_lost(n) then
  return {'load'}
end
local more = redis.call('HGET', KEYS[2], 'more')
if n < q then
  if more == '1' then
    return {'refill'}
  end
  return {'no', tostring(n)}
end
local ids = redis.call('SPOP', KEYS[1], q)
redis.call('HSET', KEYS[2], 'n', n - #ids)
redis.call('SET', KEYS[3], 'R', 'EX', ARGV[2])
local low = '0'
if more == '1' and n - q < tonumber(ARGV[3]) then
  low = '1'
end
local out = {'ok', low}
for i = 1, #ids do
  out[#out + 1] = ids[i]
end
return out
