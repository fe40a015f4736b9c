"""The audit log: every change, who made it and when."""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import AuditRow
from server.services.common import iso


def record(session: AsyncSession, actor: str | None, action: str, target: str, **details: Any) -> None:
    """Add an audit entry to the caller's transaction (it commits with the change it describes)."""
    session.add(AuditRow(actor=actor, action=action, target=target[:200],
                         details=json.dumps(details, ensure_ascii=False, default=str)))


async def entries(session: AsyncSession, *, target: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
    """Newest entries first, optionally for one target such as "flow:registration"."""
    query = select(AuditRow).order_by(AuditRow.id.desc()).limit(max(1, min(limit, 1000)))
    if target is not None:
        query = query.where(AuditRow.target == target)
    rows = (await session.execute(query)).scalars().all()
    return [
        {"id": r.id, "at": iso(r.at), "actor": r.actor, "action": r.action, "target": r.target,
         "details": json.loads(r.details or "{}")}
        for r in rows
    ]
