-- A dialog's turn high-water mark raised, never lowered (`stores.lost`). KEYS: the mark.
-- ARGV: the turn number, when it expires (ms since the epoch, the dialog's expiry). Returns 1 when raised.
local turn = tonumber(ARGV[1])
if turn <= (tonumber(redis.call('GET', KEYS[1])) or -1) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
