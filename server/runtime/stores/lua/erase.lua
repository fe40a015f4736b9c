-- One user forgotten. KEYS: lock, dialog, timers, outbox, outq, outc, funnel expiry info, turn mark.
-- ARGV: token, member.
-- Returns 0 when the lock was lost, else {dialogs deleted, timers removed, queued sends dropped}.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local dialog = redis.call('DEL', KEYS[2])
local timer = redis.call('ZREM', KEYS[3], ARGV[2])
local queued = redis.call('LLEN', KEYS[4])
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('HDEL', KEYS[6], ARGV[2])
-- the funnel's expiry record: an erased dialog must not be counted as expired later
redis.call('HDEL', KEYS[7], ARGV[2])
redis.call('DEL', KEYS[8])
redis.call('DEL', KEYS[1])
return {dialog, timer, queued}
