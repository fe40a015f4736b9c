-- needs: funnel
-- The timers zset holds when to look at a dialog next: its timer's due time or, while the funnel counts,
-- just after its expiry if that comes first. Due entries whose dialog is gone are counted as expired (when
-- the expiry info remembers them) and removed; the others are claimed until the lease end (none: left
-- where they are, for a sweep). KEYS: timers, funnel expiry info, counter index. ARGV: now, lease end
-- ('' claims nothing), offset, limit, dialog key prefix, hour, counter key prefix (without the bot),
-- counter key ttl. Returns how many it looked at, then the members whose dialog is still there.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', ARGV[3], ARGV[4])
local out = {#due}
for _, m in ipairs(due) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  if redis.call('EXISTS', ARGV[5] .. '{' .. bot .. ':' .. user .. '}:d') == 1 then
    if ARGV[2] ~= '' then redis.call('ZADD', KEYS[1], ARGV[2], m) end
    out[#out + 1] = m
  else
    count_expired(KEYS[2], m, ARGV[7] .. bot .. '|', ARGV[6], KEYS[3], ARGV[8])
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
