-- Drop a subject's projection so the next use loads it again from SQL.
-- KEYS = the subject's keys. For stock, KEYS[1] is the warehouse list ("<base>whs") and the
-- warehouse hashes it names go too.
local n = 0
if string.sub(KEYS[1], -4) == ':whs' then
  local list = redis.call('GET', KEYS[1])
  local base = string.sub(KEYS[1], 1, -4)
  if list then
    for wh in string.gmatch(list, '[^,]+') do
      n = n + redis.call('DEL', base .. 'w:' .. wh)
    end
  end
end
for i = 1, #KEYS do
  n = n + redis.call('DEL', KEYS[i])
end
return n
