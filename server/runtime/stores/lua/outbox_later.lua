-- KEYS: outbox, outq, outc. ARGV: item id, item json, at, member, owner.
if redis.call('HGET', KEYS[3], ARGV[4]) ~= ARGV[5] then return 0 end
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LSET', KEYS[1], 0, ARGV[2]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('HDEL', KEYS[3], ARGV[4])
return 1
