"""The SQL store's turn on PostgreSQL as plain driver statements: a lease row instead of an open transaction.

`begin` takes the dialog's lease (owner token and end on the row) and reads the dialog and the duplicate
mark in one statement; `commit` saves everything of the turn in one statement whose first part compares
the lease token and whose other parts run only when it matched. Each text is made once per shape of turn
(which parts it has) and kept, so the driver prepares it once per connection and SQLAlchemy compiles
nothing on the way.
"""
from __future__ import annotations

import functools

from server.runtime.stores.base import TIMELINE_CAP

# $1 bot, $2 user, $3 token, $4 now (the store's clock), $5 lease end, $6 duplicate mark (NULL: none)
BEGIN = """
WITH seen AS (
  SELECT 1 FROM runtime_dedupe WHERE $6::varchar IS NOT NULL AND bot_id = $1 AND key = $6 AND expires_at > $4
), took AS (
  INSERT INTO runtime_dialogs AS d (bot_id, user_id, session, expires_at, owner, held_until)
  SELECT $1, $2, NULL, 0, $3, $5 WHERE NOT EXISTS (SELECT 1 FROM seen)
  ON CONFLICT (bot_id, user_id) DO UPDATE SET owner = excluded.owner, held_until = excluded.held_until
  WHERE d.owner IS NULL OR d.held_until <= $4
  RETURNING d.session, d.expires_at
)
SELECT EXISTS (SELECT 1 FROM seen), EXISTS (SELECT 1 FROM took), (SELECT session FROM took),
       (SELECT expires_at FROM took),
       (SELECT held_until FROM runtime_dialogs WHERE bot_id = $1 AND user_id = $2)
"""

# $1 bot, $2 user, $3 token, $4 now, $5 new lease end
RENEW = ("UPDATE runtime_dialogs SET held_until = $5 WHERE bot_id = $1 AND user_id = $2 AND owner = $3 "
         "AND held_until > $4")

# $1 bot, $2 user, $3 token: the placeholder row a lease made for a user without a dialog goes with it.
RELEASE = """
WITH gone AS (
  DELETE FROM runtime_dialogs WHERE bot_id = $1 AND user_id = $2 AND owner = $3 AND session IS NULL RETURNING 1
)
UPDATE runtime_dialogs SET owner = NULL, held_until = NULL
WHERE bot_id = $1 AND user_id = $2 AND owner = $3 AND session IS NOT NULL
"""

# $1 bot, $2 user, $3 token, $4 now: whether the lease is still the token's (erasure's check, under FOR UPDATE)
OWNED = ("SELECT 1 FROM runtime_dialogs WHERE bot_id = $1 AND user_id = $2 AND owner = $3 AND held_until > $4 "
         "FOR UPDATE")

_IF_OWN = "EXISTS (SELECT 1 FROM own)"


_MARK = "<mark>"  # the mark key's parameter, numbered once the mark's part takes it


@functools.lru_cache(maxsize=128)
def commit(keep: bool, funnel: bool, timeline: bool, dedupe: bool, outbox: bool, actions: bool,
           unlocked: bool = False) -> str:
    """The one statement of a turn's commit with these parts; it answers (lease matched, queue claimed).

    Parameters: $1 bot, $2 user, $3 token, $4 now, then per part in this order: the dialog (session,
    expires_at, due, when kept; then, `unlocked`, the text the turn read), funnel rows (flow, version,
    hour, field, value arrays, in key order), the timeline record, the mark (key, expiry), the sends (item
    ids, items, claim end), the actions (ids, items).

    `unlocked`: the turn read the dialog from this process's last write, without a lease
    (`begin(optimistic=True)`): it saves only while the row holds that very text, unexpired, under no live
    lease, and the delivery's mark is not there. A concurrent writer of the row is waited for and its
    result compared (the row's own conditions are checked again on its newest version).
    """
    n = 4
    params: list[str] = []

    def p() -> str:
        nonlocal n
        n += 1
        params.append(f"${n}")
        return f"${n}"

    # The lease's compare is the dialog's own write: nothing else runs when it did not match.
    if keep:
        own = (f"UPDATE runtime_dialogs SET session = {p()}, expires_at = {p()}, due = {p()}::float8, "
               "owner = NULL, held_until = NULL")
    else:
        own = "DELETE FROM runtime_dialogs"
    if unlocked:
        # ($3, the token, only claims the outbox here: named so that its type is known without one.)
        own += (f" WHERE bot_id = $1 AND user_id = $2 AND session = {p()} AND expires_at > $4 "
                "AND (owner IS NULL OR held_until <= $4) AND $3::varchar IS NOT NULL")
        if dedupe:
            own += (" AND NOT EXISTS (SELECT 1 FROM runtime_dedupe WHERE bot_id = $1 AND key = "
                    f"{_MARK}::varchar AND expires_at > $4)")
    else:
        own += " WHERE bot_id = $1 AND user_id = $2 AND owner = $3 AND held_until > $4"
    parts = [f"own AS ({own} RETURNING 1)"]
    if funnel:
        # Inserted beside the counters, not added to them: every turn of a bot raises the same rows, and an
        # update in place waits for the turn before it to commit. `FOLD` adds them up later.
        parts.append(
            "fn AS (INSERT INTO funnel_deltas (bot_id, flow_id, version, hour, field, value) "
            f"SELECT $1, u.* FROM unnest({p()}::varchar[], {p()}::varchar[], {p()}::int[], {p()}::varchar[], "
            f"{p()}::bigint[]) AS u WHERE {_IF_OWN})")
    if timeline:
        parts.append(f"tl AS (INSERT INTO runtime_timeline (bot_id, user_id, at, record) SELECT $1, $2, $4, {p()} "
                     f"WHERE {_IF_OWN})")
        # The statement's snapshot does not see the record it adds: keep the user's newest CAP - 1 besides it.
        parts.append("tc AS (DELETE FROM runtime_timeline WHERE id IN (SELECT id FROM runtime_timeline "
                     f"WHERE bot_id = $1 AND user_id = $2 ORDER BY id DESC OFFSET {TIMELINE_CAP - 1}) "
                     f"AND {_IF_OWN})")
    if dedupe:
        key = p()
        parts[0] = parts[0].replace(_MARK, key)
        parts.append(f"dd AS (INSERT INTO runtime_dedupe AS m (bot_id, key, expires_at) SELECT $1, {key}, {p()} "
                     f"WHERE {_IF_OWN} ON CONFLICT (bot_id, key) DO UPDATE SET expires_at = excluded.expires_at)")
    claimed = "NULL::boolean"
    if outbox:
        parts.append("ob AS (INSERT INTO runtime_outbox (bot_id, user_id, item_id, item) SELECT $1, $2, u.i, u.t "
                     f"FROM unnest({p()}::varchar[], {p()}::text[]) WITH ORDINALITY AS u(i, t, n) "
                     f"WHERE {_IF_OWN} ORDER BY u.n)")
        # A no-op update locks an existing queue row, so this waits for a sender ending its claim
        # (outbox_done) instead of seeing a row that sender is about to delete; xmax = 0: inserted.
        parts.append("q AS (INSERT INTO runtime_outbox_queue AS q (bot_id, user_id, owner, next_at) "
                     f"SELECT $1, $2, $3, {p()} WHERE {_IF_OWN} "
                     "ON CONFLICT (bot_id, user_id) DO UPDATE SET owner = q.owner RETURNING (q.xmax = 0) AS added)")
        claimed = "(SELECT added FROM q)"
    if actions:
        parts.append("ac AS (INSERT INTO runtime_actions (id, item, next_at) SELECT u.i, u.t, $4 "
                     f"FROM unnest({p()}::varchar[], {p()}::text[]) AS u(i, t) WHERE {_IF_OWN})")
    return f"WITH {', '.join(parts)} SELECT {_IF_OWN}, {claimed}"

# $1 bot, $2 user, $3 owner, $4 the sent item's id, $5 the claim's new end. Drops the head when it is the
# item (whoever says it went out); for the claim's owner, ends the claim when nothing is left or renews it
# and answers the next item. A commit that queued an item this statement's snapshot does not see has
# updated the queue row since it was read (its xmin changed): then nothing ends, and the caller asks again.
DONE = """
WITH q AS (
  SELECT xmin::text AS x FROM runtime_outbox_queue WHERE bot_id = $1 AND user_id = $2 AND owner = $3 FOR UPDATE
), items AS (
  SELECT id, item_id, item, row_number() OVER (ORDER BY id) AS n FROM (
    SELECT id, item_id, item FROM runtime_outbox WHERE bot_id = $1 AND user_id = $2 ORDER BY id LIMIT 2) AS s
), dropped AS (
  DELETE FROM runtime_outbox WHERE id = (SELECT id FROM items WHERE n = 1 AND item_id = $4) RETURNING id
), rest AS (
  SELECT item FROM items WHERE n = CASE WHEN EXISTS (SELECT 1 FROM dropped) THEN 2 ELSE 1 END
), ended AS (
  DELETE FROM runtime_outbox_queue WHERE bot_id = $1 AND user_id = $2 AND owner = $3
  AND xmin::text = (SELECT x FROM q) AND NOT EXISTS (SELECT 1 FROM rest) RETURNING 1
), kept AS (
  UPDATE runtime_outbox_queue SET next_at = $5 WHERE bot_id = $1 AND user_id = $2 AND owner = $3
  AND EXISTS (SELECT 1 FROM rest) RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM q), EXISTS (SELECT 1 FROM ended), EXISTS (SELECT 1 FROM kept), (SELECT item FROM rest)
"""

# DONE for many users in one statement (their acks of an event-loop pass, one item and one user each):
# $1 bots, $2 users, $3 owners, $4 sent item ids, $5 the claims' new end. Each user's answer is DONE's; the
# queue rows are locked in key order, so two of these at once never wait on each other in a circle.
DONE_MANY = """
WITH a AS (
  SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS a(bot, usr, own, sent)
), held AS (
  SELECT t.bot_id, t.user_id, t.xmin::text AS x FROM runtime_outbox_queue t
  JOIN a ON t.bot_id = a.bot AND t.user_id = a.usr AND t.owner = a.own
  ORDER BY t.bot_id, t.user_id FOR UPDATE OF t
), items AS (
  SELECT a.bot, a.usr, a.sent, s.id, s.item_id, s.item, row_number() OVER (PARTITION BY a.bot, a.usr ORDER BY s.id) AS n
  FROM a CROSS JOIN LATERAL (SELECT id, item_id, item FROM runtime_outbox o
                             WHERE o.bot_id = a.bot AND o.user_id = a.usr ORDER BY id LIMIT 2) AS s
), dropped AS (
  DELETE FROM runtime_outbox o USING items i WHERE o.id = i.id AND i.n = 1 AND i.item_id = i.sent
  RETURNING o.bot_id, o.user_id
), rest AS (
  SELECT i.bot, i.usr, i.item FROM items i WHERE i.n = CASE WHEN EXISTS (
    SELECT 1 FROM dropped d WHERE d.bot_id = i.bot AND d.user_id = i.usr) THEN 2 ELSE 1 END
), ended AS (
  DELETE FROM runtime_outbox_queue t USING held h JOIN a ON a.bot = h.bot_id AND a.usr = h.user_id
  WHERE t.bot_id = h.bot_id AND t.user_id = h.user_id AND t.owner = a.own AND t.xmin::text = h.x
  AND NOT EXISTS (SELECT 1 FROM rest r WHERE r.bot = h.bot_id AND r.usr = h.user_id) RETURNING t.bot_id, t.user_id
), kept AS (
  UPDATE runtime_outbox_queue t SET next_at = $5 FROM a
  WHERE t.bot_id = a.bot AND t.user_id = a.usr AND t.owner = a.own
  AND EXISTS (SELECT 1 FROM rest r WHERE r.bot = a.bot AND r.usr = a.usr) RETURNING t.bot_id, t.user_id
)
SELECT a.bot, a.usr,
       EXISTS (SELECT 1 FROM held h WHERE h.bot_id = a.bot AND h.user_id = a.usr),
       EXISTS (SELECT 1 FROM ended e WHERE e.bot_id = a.bot AND e.user_id = a.usr),
       EXISTS (SELECT 1 FROM kept k WHERE k.bot_id = a.bot AND k.user_id = a.usr),
       (SELECT r.item FROM rest r WHERE r.bot = a.bot AND r.usr = a.usr)
FROM a
"""

# Turns' counter increments added to the counters, each once (a row another fold deleted first is skipped);
# in key order, so two folds at once lock the counters in the same order.
FOLD = """
WITH moved AS (DELETE FROM funnel_deltas RETURNING bot_id, flow_id, version, hour, field, value)
INSERT INTO funnel_counters AS f (bot_id, flow_id, version, hour, field, value)
SELECT bot_id, flow_id, version, hour, field, sum(value) FROM moved
GROUP BY bot_id, flow_id, version, hour, field ORDER BY bot_id, flow_id, version, hour, field
ON CONFLICT (bot_id, flow_id, version, hour, field) DO UPDATE SET value = f.value + excluded.value
"""
