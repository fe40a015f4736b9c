"""The Redis store's Lua scripts: each runs atomically, so a turn's begin and its commit are one step each."""
from __future__ import annotations

from server.runtime.ratelimit import GCRA
from server.runtime.stores.resp import Script

# Funnel counters. bump: one increment of a counter group (the key is new: it joins the index, with its
# hour, and expires after `keep` s). count_expired: the dialog `m` remembered in the expiry info hash is
# counted as ended by expiry, in the group of its flow version at `hour`, and forgotten (nothing when the
# hash has no entry for it: counted already, or never counted).
FUNNEL = """
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
"""

# KEYS: lock, dialog, then the mark sets of the last redis.MARK_BUCKETS buckets. ARGV: token, lock ms, mark ('' none).
BEGIN = Script("""
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('PTTL', KEYS[1])}
end
if ARGV[3] ~= '' then
  for i = 3, #KEYS do
    if redis.call('SISMEMBER', KEYS[i], ARGV[3]) == 1 then
      redis.call('DEL', KEYS[1])
      return {2}
    end
  end
end
return {0, redis.call('GET', KEYS[2])}
""")

RENEW = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
""")

# KEYS: lock, dialog, timeline stream, this bucket's mark set, timers, outbox, outq, actq, acts, outc,
#       the bot's rate, funnel expiry info hash, funnel counter index.
# ARGV[1]: the arguments as one MessagePack array A (hiredis frames every argument with a sprintf and a
#       copy, so one bulk string costs the client a fraction of forty); ARGV[2] and ARGV[3], binary, are
#       A[2] and A[17] (Redis's MessagePack reader has no binary type). A: token, dialog ('' drops it), ttl,
#       mark ('' none), mark set ttl, member, wake time ('' none), timeline record or, when it is a JSON
#       array, its brief, stored beside the saved dialog for the snapshot ('' none), stream max
#       length, c funnel pairs ('' counts nothing), claim end, now, n outbox, had timer, rate interval ms
#       ('' keeps no rate), read unlocked ('' the lock is held), the dialog as read unlocked ('' none), lock
#       ms, outbox items..., then when counting: prior gone ('1'), expiry info ('' drops it, '=' keeps it as
#       it is), hour, the bot's counter key prefix, counter key ttl, c (group, field) pairs; then action
#       (id, json) pairs. Times come as text, their exact digits; ttl, c and n as numbers.
# KEYS[14..]: the older mark sets, when read unlocked.
# Returns 0 when the lock was lost, 1 when saved, {2, ms to the first send's rate slot or -1} when
# saved and the caller now holds the outbox claim. Read unlocked, it saves only when the lock is free, the
# mark new and the dialog as read; else {3, what BEGIN answers} (the lock then held if that is 0).
COMMIT = Script(GCRA + FUNNEL + """
local A = cmsgpack.unpack(ARGV[1])
A[2], A[17] = ARGV[2], ARGV[3]
if A[16] == '' then
  if redis.call('GET', KEYS[1]) ~= A[1] then return 0 end
else
  -- the script runs alone: a lock nobody holds now is not taken meanwhile, so it is only taken (and the
  -- caller then holds it) when the dialog changed and must be stepped again
  if redis.call('EXISTS', KEYS[1]) == 1 then return {3, 1, redis.call('PTTL', KEYS[1])} end
  if A[4] ~= '' then
    local seen = redis.call('SISMEMBER', KEYS[4], A[4]) == 1
    for i = 14, #KEYS do seen = seen or redis.call('SISMEMBER', KEYS[i], A[4]) == 1 end
    if seen then return {3, 2} end
  end
  local stored = redis.call('GET', KEYS[2])
  if (stored or '') ~= A[17] then
    redis.call('SET', KEYS[1], A[1], 'PX', A[18])
    return {3, 0, stored}
  end
end
if A[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], A[2], 'EX', A[3]) end
if A[4] ~= '' and redis.call('SADD', KEYS[4], A[4]) == 1 and redis.call('TTL', KEYS[4]) < 0 then
  redis.call('EXPIRE', KEYS[4], A[5])
end
if A[7] ~= '' then redis.call('ZADD', KEYS[5], A[7], A[6])
elseif A[14] == '1' or A[2] == '' then redis.call('ZREM', KEYS[5], A[6]) end
if string.byte(A[8]) == 91 then  -- '[': a brief, whose record takes its snapshot from the dialog
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', A[9], '*', 'm', A[6], 'r', A[8], 'd', A[2])
elseif A[8] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', A[9], '*', 'm', A[6], 'r', A[8])
end
local n = tonumber(A[13])
local result = 1
if n > 0 then
  redis.call('RPUSH', KEYS[6], unpack(A, 19, 18 + n))
  if redis.call('ZADD', KEYS[7], 'NX', A[11], A[6]) == 1 then
    redis.call('HSET', KEYS[10], A[6], A[1])
    result = {2, -1}
    -- one slot per queued send: the first waits for the returned time, the k-th k intervals longer
    if A[15] ~= '' then result[2] = reserve(KEYS[11], tonumber(A[15]) * n, 0) end
  end
end
local first_action = 19 + n
if A[10] ~= '' then
  local c, at = tonumber(A[10]), 19 + n
  first_action = at + 5 + 2 * c
  if A[at] == '1' then count_expired(KEYS[12], A[6], A[at + 3], A[at + 2], KEYS[13], A[at + 4]) end
  if A[at + 1] == '' then
    redis.call('HDEL', KEYS[12], A[6])
  elseif A[at + 1] ~= '=' then
    redis.call('HSET', KEYS[12], A[6], A[at + 1])
  end
  for i = at + 5, at + 4 + 2 * c, 2 do
    bump(A[at + 3] .. A[i], A[i + 1], A[at + 2], KEYS[13], A[at + 4])
  end
end
for i = first_action, #A, 2 do
  redis.call('HSET', KEYS[9], A[i], A[i + 1])
  redis.call('ZADD', KEYS[8], A[12], A[i])
end
if A[16] == '' then redis.call('DEL', KEYS[1]) end
return result
""")

# One user forgotten. KEYS: lock, dialog, timers, outbox, outq, outc, funnel expiry info. ARGV: token, member.
# Returns 0 when the lock was lost, else {dialogs deleted, timers removed, queued sends dropped}.
ERASE = Script("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local dialog = redis.call('DEL', KEYS[2])
local timer = redis.call('ZREM', KEYS[3], ARGV[2])
local queued = redis.call('LLEN', KEYS[4])
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('HDEL', KEYS[6], ARGV[2])
-- the funnel's expiry record: an erased dialog must not be counted as expired later
redis.call('HDEL', KEYS[7], ARGV[2])
redis.call('DEL', KEYS[1])
return {dialog, timer, queued}
""")

RELEASE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")

# The timers zset holds when to look at a dialog next: its timer's due time or, while the funnel counts,
# just after its expiry if that comes first. Due entries whose dialog is gone are counted as expired (when
# the expiry info remembers them) and removed; the others are claimed until the lease end (none: left
# where they are, for a sweep). KEYS: timers, funnel expiry info, counter index. ARGV: now, lease end
# ('' claims nothing), offset, limit, dialog key prefix, hour, counter key prefix (without the bot),
# counter key ttl. Returns how many it looked at, then the members whose dialog is still there.
WAKE = Script(FUNNEL + """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', ARGV[3], ARGV[4])
local out = {#due}
for _, m in ipairs(due) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  if redis.call('EXISTS', ARGV[5] .. '{' .. bot .. ':' .. user .. '}:d') == 1 then
    if ARGV[2] ~= '' then redis.call('ZADD', KEYS[1], ARGV[2], m) end
    out[#out + 1] = m
  else
    count_expired(KEYS[2], m, ARGV[7] .. bot .. '|', ARGV[6], KEYS[3], ARGV[8])
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
""")

# The funnel's own expiry zset of earlier releases, folded into the timers a batch at a time: a member
# wakes at the earlier of its two times. KEYS: that zset, timers. Returns how many moved.
FOLD_EXPIRY = Script("""
local moved = redis.call('ZRANGE', KEYS[1], 0, 999, 'WITHSCORES')
for i = 1, #moved, 2 do
  redis.call('ZADD', KEYS[2], 'LT', moved[i + 1], moved[i])
  redis.call('ZREM', KEYS[1], moved[i])
end
return #moved / 2
""")

# KEYS: outq, outc. ARGV: now, lease end, limit, owner. Returns member, taken-over flag pairs.
OUTBOX_CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, m in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], m)
  out[#out + 1] = m
  out[#out + 1] = redis.call('HSET', KEYS[2], m, ARGV[4]) == 0 and 1 or 0
end
return out
""")

# KEYS: outq, outc. ARGV: lease end, owner, members...
OUTBOX_HOLD = Script("""
local held = {}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i])
    held[#held + 1] = ARGV[i]
  end
end
return held
""")

# Items are encoded with "id" first, so the head is recognised by its opening bytes, without decoding.
# KEYS: outbox, outq, outc, the bot's rate. ARGV: '{"id":"<item id>"', member, owner, rate interval ms
# ('' keeps no rate). Returns nil, or the next head with the ms to its rate slot (-1: none reserved).
OUTBOX_DONE = Script(GCRA + """
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then return false end
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
local next = redis.call('LINDEX', KEYS[1], 0)
if not next then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('HDEL', KEYS[3], ARGV[2])
  return false
end
if ARGV[4] == '' then return {next, -1} end
return {next, reserve(KEYS[4], tonumber(ARGV[4]), 0)}
""")

# KEYS: outbox, outq, outc. ARGV: item id, item json, at, member, owner.
OUTBOX_LATER = Script("""
if redis.call('HGET', KEYS[3], ARGV[4]) ~= ARGV[5] then return 0 end
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LSET', KEYS[1], 0, ARGV[2]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('HDEL', KEYS[3], ARGV[4])
return 1
""")

# Many users' sent items dropped at once. KEYS: outq, outc. ARGV[1]: a MessagePack array A (one argument
# instead of five per user; see COMMIT) of: user key prefix, rate key prefix, rate interval ms ('' none),
# then per user: bot, user, owner, n, n head prefixes ('{"id":"<item id>"').
# Returns bot, user, next head, ms to its rate slot (-1: none) for every user whose queue goes on.
OUTBOX_ACKS = Script(GCRA + """
local A = cmsgpack.unpack(ARGV[1])
local out = {}
local i = 4
while i <= #A do
  local bot, user, owner, n = A[i], A[i + 1], A[i + 2], A[i + 3]
  local m = bot .. '|' .. user
  local list = A[1] .. '{' .. bot .. ':' .. user .. '}:o'
  if redis.call('HGET', KEYS[2], m) == owner then
    for j = i + 4, i + 3 + n do
      local head = redis.call('LINDEX', list, 0)
      if head and string.sub(head, 1, #A[j]) == A[j] then redis.call('LPOP', list) end
    end
    local nxt = redis.call('LINDEX', list, 0)
    if nxt then
      local wait = -1
      if A[3] ~= '' then wait = reserve(A[2] .. bot, tonumber(A[3]), 0) end
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
""")

# Claim due members of a zset by pushing their score to the lease end: one caller gets each.
CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], m) end
if KEYS[2] and #due > 0 then return redis.call('HMGET', KEYS[2], unpack(due)) end
return due
""")

ACTION_LATER = Script("""
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 0
""")

# KEYS: outq, outbox key prefix. Users waiting, and the oldest `queued` among the 50 next due heads.
OUTBOX_SAMPLE = Script("""
local users = redis.call('ZCARD', KEYS[1])
local oldest = ''
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, 49)) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  local head = redis.call('LINDEX', ARGV[1] .. '{' .. bot .. ':' .. user .. '}:o', 0)
  if head then
    local queued = cjson.decode(head)['queued']
    if queued and (oldest == '' or queued < tonumber(oldest)) then oldest = string.format('%.17g', queued) end
  end
end
return {users, oldest}
""")
