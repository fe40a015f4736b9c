-- KEYS: outq, outc. ARGV: lease end, owner, members...
local held = {}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i])
    held[#held + 1] = ARGV[i]
  end
end
return held
