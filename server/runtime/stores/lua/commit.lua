-- needs: gcra, funnel
-- One turn saved at once (stores.commit_args.CommitArgs names and documents every field).
-- KEYS: lock, dialog, timeline stream, this bucket's mark set, timers, outbox, outq, actq, acts, outc,
--       the bot's rate, funnel expiry info hash, funnel counter index, the dialog's turn mark;
--       KEYS[15..]: the older mark sets, when read unlocked.
-- ARGV[1]: the arguments as one MessagePack map A, checked by its version `v`; ARGV[2] the dialog to save
--       ('' drops it) and ARGV[3] the dialog as read unlocked ('' none), binary, so beside the map (Redis's
--       MessagePack reader has no binary type). An absent field is Lua's nil; times come as text, their
--       exact digits.
-- Returns 0 when the lock was lost, 1 when saved, {2, ms to the first send's rate slot or -1} when
-- saved and the caller now holds the outbox claim. Read unlocked, it saves only when the lock is free, the
-- mark new, the dialog as read and no turn mark set; else {3, what BEGIN answers} (the lock then held if
-- that is 0). A turn mark (`stores.lost`) is dropped by the turn after the one that read it, which
-- numbers itself past it, and with the dialog.
local A = cmsgpack.unpack(ARGV[1])
if A.v ~= 2 then return redis.error_reply('COMMIT arguments of version ' .. tostring(A.v) .. ', expected 2') end
local dialog, as_read = ARGV[2], ARGV[3]
if not A.unlocked then
  if redis.call('GET', KEYS[1]) ~= A.token then return 0 end
else
  -- the script runs alone: a lock nobody holds now is not taken meanwhile, so it is only taken (and the
  -- caller then holds it) when the dialog changed and must be stepped again
  if redis.call('EXISTS', KEYS[1]) == 1 then return {3, 1, redis.call('PTTL', KEYS[1])} end
  if A.mark then
    local seen = redis.call('SISMEMBER', KEYS[4], A.mark) == 1
    for i = 15, #KEYS do seen = seen or redis.call('SISMEMBER', KEYS[i], A.mark) == 1 end
    if seen then return {3, 2} end
  end
  local found = redis.call('MGET', KEYS[2], KEYS[14])  -- one call: same slot (`keys.turn_mark`)
  local stored, turn_mark = found[1], found[2]
  if (stored or '') ~= as_read or turn_mark then
    redis.call('SET', KEYS[1], A.token, 'PX', A.lock_ms)
    return {3, 0, stored, turn_mark}
  end
end
if dialog == '' then
  redis.call('DEL', KEYS[2], KEYS[14])  -- the turn mark goes with the dialog, in the same call
else
  redis.call('SET', KEYS[2], dialog, 'EX', A.ttl)
  if A.unmark then redis.call('DEL', KEYS[14]) end
end
if A.mark and redis.call('SADD', KEYS[4], A.mark) == 1 and redis.call('TTL', KEYS[4]) < 0 then
  redis.call('EXPIRE', KEYS[4], A.mark_ttl)
end
if A.wake then redis.call('ZADD', KEYS[5], A.wake, A.member)
elseif A.had_timer or dialog == '' then redis.call('ZREM', KEYS[5], A.member) end
if A.timeline then
  if A.brief then  -- a brief, whose record takes its snapshot from the dialog
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', A.stream_max, '*', 'm', A.member, 'r', A.timeline, 'd', dialog)
  else
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', A.stream_max, '*', 'm', A.member, 'r', A.timeline)
  end
end
local outbox, actions = A.outbox or {}, A.actions or {}
local n = #outbox
local result = 1
if n > 0 then
  redis.call('RPUSH', KEYS[6], unpack(outbox))
  if redis.call('ZADD', KEYS[7], 'NX', A.claim_end, A.member) == 1 then
    redis.call('HSET', KEYS[10], A.member, A.token)
    result = {2, -1}
    -- one slot per queued send: the first waits for the returned time, the k-th k intervals longer
    if A.rate_ms then result[2] = reserve(KEYS[11], A.rate_ms * n, 0) end
  end
end
local c = A.counts
if c then
  if c.prior_gone then count_expired(KEYS[12], A.member, c.prefix, c.hour, KEYS[13], c.keep) end
  if not c.info then
    redis.call('HDEL', KEYS[12], A.member)
  elseif c.info ~= '=' then
    redis.call('HSET', KEYS[12], A.member, c.info)
  end
  local pairs_ = c.pairs or {}
  for i = 1, #pairs_, 2 do bump(c.prefix .. pairs_[i], pairs_[i + 1], c.hour, KEYS[13], c.keep) end
end
for i = 1, #actions, 2 do
  redis.call('HSET', KEYS[9], actions[i], actions[i + 1])
  redis.call('ZADD', KEYS[8], A.now, actions[i])
end
if not A.unlocked then redis.call('DEL', KEYS[1]) end
return result
