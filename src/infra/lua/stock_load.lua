-- Load a SKU's warehouses from SQL unless another caller already did ("load if absent").
-- KEYS[1] = the SKU's warehouse list key; KEYS[2..n] = one hash per warehouse, in priority order.
-- ARGV[1] = comma-separated warehouse ids (same order); then available, locked, sold per warehouse.
-- With the list present, only hashes that are missing are written (one was lost alone): a hash
-- still there carries holds made since SQL was read, and overwriting it would lose them.
local listed = redis.call('EXISTS', KEYS[1]) == 1
local n = 0
for i = 2, #KEYS do
  local base = (i - 2) * 3 + 1
  if not listed or redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('DEL', KEYS[i])
    redis.call('HSET', KEYS[i], 'a', ARGV[base + 1], 'l', ARGV[base + 2], 's', ARGV[base + 3])
    n = n + 1
  end
end
if not listed then
  redis.call('SET', KEYS[1], ARGV[1])
end
return n
