-- Reconciliation's repair of a voucher pool: stale ids out, missing ids in, and the pool's size
-- kept in the meta (code_pool.lua tells a lost pool from an empty one by it). A pool that is not
-- loaded is left alone: its next load reads SQL.
-- KEYS[1] = pool, KEYS[2] = meta. ARGV[1] = how many ids to remove, then those ids, then the ids
-- to add. Returns the pool's size, or -1 when it is not loaded (nothing was changed).
if redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
-- A pool lost alone (code_pool.lua) is loaded afresh by the next hold rather than patched.
if pool_lost() then
  return -1
end
local k = tonumber(ARGV[1])
for i = 2, k + 1, 500 do
  redis.call('SREM', KEYS[1], unpack(ARGV, i, math.min(i + 499, k + 1)))
end
for i = k + 2, #ARGV, 500 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
local n = redis.call('SCARD', KEYS[1])
redis.call('HSET', KEYS[2], 'n', n)
return n
