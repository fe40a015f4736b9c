-- KEYS: outq, outbox key prefix. Users waiting, and the oldest `queued` among the 50 next due heads.
local users = redis.call('ZCARD', KEYS[1])
local oldest = ''
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, 49)) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  local head = redis.call('LINDEX', ARGV[1] .. '{' .. bot .. ':' .. user .. '}:o', 0)
  if head then
    local queued = cjson.decode(head)['queued']
    if queued and (oldest == '' or queued < tonumber(oldest)) then oldest = string.format('%.17g', queued) end
  end
end
return {users, oldest}
