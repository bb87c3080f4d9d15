-- Prepended to each voucher pool script (KEYS[1] = pool, KEYS[2] = meta in all of them).
-- Redis keeps no empty set: a pool the scripts left with ids (the meta's n) and now gone was lost
-- alone (evicted, a key-by-key flush). That is "not loaded", never "none left": the meta goes, and
-- the next hold loads the pool afresh from SQL. `n` is the pool's size when the caller has it.
local function pool_lost(n)
  if (n or redis.call('SCARD', KEYS[1])) == 0 and tonumber(redis.call('HGET', KEYS[2], 'n') or '0') > 0 then
    redis.call('DEL', KEYS[2])
    return true
  end
  return false
end
