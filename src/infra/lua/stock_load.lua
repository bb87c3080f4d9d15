-- Load a SKU's warehouses from SQL unless another caller already did ("load if absent").
-- KEYS[1] = the SKU's warehouse list key; KEYS[2..n] = one hash per warehouse, in priority order.
-- ARGV[1] = comma-separated warehouse ids (same order); then available, locked, sold per warehouse.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
for i = 2, #KEYS do
  local base = (i - 2) * 3 + 1
  redis.call('DEL', KEYS[i])
  redis.call('HSET', KEYS[i], 'a', ARGV[base + 1], 'l', ARGV[base + 2], 's', ARGV[base + 3])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
