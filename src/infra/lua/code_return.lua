-- Put held code ids back in the pool (release, expiry, or undoing a hold SQL refused).
-- KEYS[1] = pool, KEYS[2] = meta, KEYS[3] = the order's key. ARGV[1] = "undo" forgets the order;
-- ARGV[2..] = ids. A pool that is not loaded is left alone: its next load reads SQL.
if ARGV[1] == 'undo' then
  redis.call('DEL', KEYS[3])
end
if redis.call('EXISTS', KEYS[2]) == 0 or #ARGV < 2 then
  return 0
end
-- A pool lost alone (code_pool.lua) is not put back a few ids at a time: that would make it
-- look loaded and empty but for them. The meta goes, and the next hold loads it from SQL.
if pool_lost() then
  return 0
end
local added = redis.call('SADD', KEYS[1], unpack(ARGV, 2))
-- The pool's size as the scripts leave it: a pool gone while this says more was lost (code_pool.lua).
redis.call('HSET', KEYS[2], 'n', redis.call('SCARD', KEYS[1]))
return added
