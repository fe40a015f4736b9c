-- Lapsed claims taken over, and retries due claimed. A claim that lapsed only because Redis could not be
-- reached (restarted, or every replica cut off) is not taken before its holder could renew it: the script
-- notes on Redis's own clock (TIME) when a poller last came by; after a silence longer than `gap` ms no
-- claim is taken over for `grace` ms, so a holder that sent a reply while Redis was away records it first.
-- KEYS: outq, outc, poll record (hash: last poll, quiet until). ARGV: now, lease end, limit, owner, gap
-- ms, grace ms, take over ('' only retries: the caller just got Redis back). Returns member, taken-over
-- flag pairs.
local t = redis.call('TIME')
local ms = t[1] * 1000 + math.floor(t[2] / 1000)
local last = tonumber(redis.call('HGET', KEYS[3], 'last') or '')
local quiet = tonumber(redis.call('HGET', KEYS[3], 'quiet') or '0')
if last and ms - last > tonumber(ARGV[5]) then quiet = ms + tonumber(ARGV[6]) end
redis.call('HSET', KEYS[3], 'last', ms, 'quiet', quiet)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, m in ipairs(due) do
  local taken = redis.call('HEXISTS', KEYS[2], m) == 1
  if not (taken and (ms < quiet or ARGV[7] == '')) then
    redis.call('ZADD', KEYS[1], ARGV[2], m)
    redis.call('HSET', KEYS[2], m, ARGV[4])
    out[#out + 1] = m
    out[#out + 1] = taken and 1 or 0
  end
end
return out
