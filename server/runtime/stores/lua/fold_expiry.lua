-- The funnel's own expiry zset of earlier releases, folded into the timers a batch at a time: a member
-- wakes at the earlier of its two times. KEYS: that zset, timers. Returns how many moved.
local moved = redis.call('ZRANGE', KEYS[1], 0, 999, 'WITHSCORES')
for i = 1, #moved, 2 do
  redis.call('ZADD', KEYS[2], 'LT', moved[i + 1], moved[i])
  redis.call('ZREM', KEYS[1], moved[i])
end
return #moved / 2
