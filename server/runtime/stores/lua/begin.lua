-- KEYS: lock, dialog, turn mark, then the mark sets of the last redis.MARK_BUCKETS buckets.
-- ARGV: token, lock ms, mark ('' none). The dialog comes with its turn mark (`stores.lost`), nil nearly always.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('PTTL', KEYS[1])}
end
if ARGV[3] ~= '' then
  for i = 4, #KEYS do
    if redis.call('SISMEMBER', KEYS[i], ARGV[3]) == 1 then
      redis.call('DEL', KEYS[1])
      return {2}
    end
  end
end
local found = redis.call('MGET', KEYS[2], KEYS[3])
return {0, found[1], found[2]}
