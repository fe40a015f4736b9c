-- Claim due members of a zset by pushing their score to the lease end: one caller gets each.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], m) end
if KEYS[2] and #due > 0 then return redis.call('HMGET', KEYS[2], unpack(due)) end
return due
