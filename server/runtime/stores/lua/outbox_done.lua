-- needs: gcra
-- Items are encoded with "id" first, so the head is recognised by its opening bytes, without decoding.
-- The head is dropped whoever says it went out (a former claimer's late word too: the new claimer then
-- does not send it again); only the claim's owner, its fencing token, hears what comes next, and its claim
-- then lasts to the new lease end: the proof its next call needs, in the round trip that marks this one.
-- KEYS: outbox, outq, outc, the bot's rate. ARGV: '{"id":"<item id>"', member, owner, rate interval ms
-- ('' keeps no rate), lease end. Returns nil, or the next head with the ms to its rate slot (-1: none reserved).
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then return false end
local next = redis.call('LINDEX', KEYS[1], 0)
if not next then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('HDEL', KEYS[3], ARGV[2])
  return false
end
redis.call('ZADD', KEYS[2], 'XX', ARGV[5], ARGV[2])
if ARGV[4] == '' then return {next, -1} end
return {next, reserve(KEYS[4], tonumber(ARGV[4]), 0)}
