-- needs: gcra
-- Many users' sent items dropped at once (as OUTBOX_DONE: by whoever sent them; the queue goes on, its
-- claim renewed to the lease end, only for its owner). KEYS: outq, outc. ARGV[1]: a MessagePack array A
-- (one argument instead of five per user) of: user key prefix, rate key prefix, rate interval
-- ms ('' none), lease end, then per user: bot, user, owner, n, n head prefixes ('{"id":"<item id>"').
-- Returns bot, user, next head, ms to its rate slot (-1: none) for every user whose queue goes on.
local A = cmsgpack.unpack(ARGV[1])
local out = {}
local i = 5
while i <= #A do
  local bot, user, owner, n = A[i], A[i + 1], A[i + 2], A[i + 3]
  local m = bot .. '|' .. user
  local list = A[1] .. '{' .. bot .. ':' .. user .. '}:o'
  for j = i + 4, i + 3 + n do
    local head = redis.call('LINDEX', list, 0)
    if head and string.sub(head, 1, #A[j]) == A[j] then redis.call('LPOP', list) end
  end
  if redis.call('HGET', KEYS[2], m) == owner then
    local nxt = redis.call('LINDEX', list, 0)
    if nxt then
      local wait = -1
      if A[3] ~= '' then wait = reserve(A[2] .. bot, tonumber(A[3]), 0) end
      redis.call('ZADD', KEYS[1], 'XX', A[4], m)
      out[#out + 1] = bot
      out[#out + 1] = user
      out[#out + 1] = nxt
      out[#out + 1] = wait
    else
      redis.call('ZREM', KEYS[1], m)
      redis.call('HDEL', KEYS[2], m)
    end
  end
  i = i + 4 + n
end
return out
