-- Add ids read from SQL to a voucher pool and move the cursor. ARGV[1] = reset ("1": the pool is
-- being loaded from scratch), ARGV[2] = more ("1" if SQL has ids past this batch), ARGV[3] =
-- cursor (highest id read), ARGV[4..] = ids. KEYS[1] = pool, KEYS[2] = meta, KEYS[3] = lock.
if ARGV[1] == '1' then
  -- Another caller loaded the pool meanwhile: loading again would put back ids already taken.
  if redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('DEL', KEYS[3])
    return -2
  end
  redis.call('DEL', KEYS[1])
elseif redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[3])
  return -1
elseif pool_lost() then
  -- The pool was lost alone (code_pool.lua): a batch past the cursor would hide the ids before
  -- it. The meta is gone, and the next hold loads the pool from SQL.
  redis.call('DEL', KEYS[3])
  return -1
end
for i = 4, #ARGV, 500 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
local n = redis.call('SCARD', KEYS[1])
redis.call('HSET', KEYS[2], 'more', ARGV[2], 'cur', ARGV[3], 'n', n)
redis.call('DEL', KEYS[3])
return n
