-- Funnel counters. bump: one increment of a counter group (the key is new: it joins the index, with its
-- hour, and expires after `keep` s). count_expired: the dialog `m` remembered in the expiry info hash is
-- counted as ended by expiry, in the group of its flow version at `hour`, and forgotten (nothing when the
-- hash has no entry for it: counted already, or never counted).
local function bump(key, field, hour, index, keep)
  -- a field's first count may be the key's first: only then can the key be missing from the index
  if redis.call('HINCRBY', key, field, 1) == 1 and redis.call('ZADD', index, 'NX', hour, key) == 1 then
    redis.call('EXPIRE', key, keep)
  end
end
local function count_expired(info, m, prefix, hour, index, keep)
  local found = redis.call('HGET', info, m)
  if found then
    local g, state = string.match(found, '^(.*)\t(.*)$')
    bump(prefix .. g .. '|' .. hour, 'x:' .. state, hour, index, keep)
    redis.call('HDEL', info, m)
  end
end
