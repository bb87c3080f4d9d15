-- Drop a subject's projection so the next use loads it again from SQL.
-- KEYS[1] = the list key (stock: "<base>:whs"), KEYS[2..] = other keys of the subject.
-- For stock, the warehouse hashes named by the list go too.
local list = redis.call('GET', KEYS[1])
local base = string.sub(KEYS[1], 1, -4)
local n = 0
if list and string.sub(KEYS[1], -4) == ':whs' then
  for wh in string.gmatch(list, '[^,]+') do
    n = n + redis.call('DEL', base .. 'w:' .. wh)
  end
end
for i = 1, #KEYS do
  n = n + redis.call('DEL', KEYS[i])
end
return n
