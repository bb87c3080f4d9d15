-- Hold qty units of one SKU for one order: the first warehouse (priority order) that can cover
-- the line whole gives them, atomically, and the order is recorded so a retry is recognised.
-- KEYS[1] = warehouse list key ("<base>:whs"), KEYS[2] = the order's key.
-- ARGV[1] = qty, ARGV[2] = order record lifetime (s), ARGV[3] = one warehouse id or "" for any.
-- Warehouse hashes are "<base>w:<id>" (base ends with a colon): they share KEYS[1]'s hash tag, so the same cluster slot.
-- Returns {"ok", warehouse}, {"no", best available}, {"seen", 0} or {"load", 0}.
local list = redis.call('GET', KEYS[1])
if not list then
  return {'load', 0}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'seen', 0}
end
local base = string.sub(KEYS[1], 1, -4)
local q = tonumber(ARGV[1])
local best = 0
for wh in string.gmatch(list, '[^,]+') do
  if ARGV[3] == '' or ARGV[3] == wh then
    local key = base .. 'w:' .. wh
    local a = redis.call('HGET', key, 'a')
    -- A listed warehouse without its hash lost it alone (evicted, or a key-by-key flush in a
    -- cluster): that is "not loaded", never "none left".
    if not a then
      return {'load', 0}
    end
    a = tonumber(a)
    if a >= q then
      redis.call('HINCRBY', key, 'a', -q)
      redis.call('HINCRBY', key, 'l', q)
      redis.call('SET', KEYS[2], wh .. ':' .. q .. ':R', 'EX', ARGV[2])
      return {'ok', tonumber(wh)}
    end
    if a > best then
      best = a
    end
  end
end
return {'no', best}
