"""Personal data settings of a bot (retention, masking) and the erasure of one user's dialog data."""
from __future__ import annotations

import json
from typing import Any

from flows.format import DATA_KEY
from flows.masking import INPUT_TYPES
from server.channels.base import USER_ID_MAX
from server.db.models import BotRow
from server.runtime.retention import RETENTION_DEFAULT

RETENTION_MAX = 3650
MASK_KEYS_MAX = 100
FIELDS = ("retention_days", "mask_keys", "mask_inputs")


def check(values: dict[str, Any], details: list[dict[str, Any]]) -> None:
    """Add one detail per bad privacy field among those present."""
    if "retention_days" in values:
        days = values["retention_days"]
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= RETENTION_MAX:
            details.append({"path": "retention_days",
                            "message": f"a whole number of days from 1 to {RETENTION_MAX}"})
    if "mask_keys" in values:
        keys = values["mask_keys"]
        if (not isinstance(keys, list) or len(keys) > MASK_KEYS_MAX
                or not all(isinstance(k, str) and len(k) <= 64 and DATA_KEY.fullmatch(k) for k in keys)):
            details.append({"path": "mask_keys", "message": f"a list of at most {MASK_KEYS_MAX} data keys: "
                                                            "Latin letters, digits and _, not starting with a digit"})
    if "mask_inputs" in values:
        kinds = values["mask_inputs"]
        if not isinstance(kinds, list) or not all(isinstance(k, str) and k in INPUT_TYPES for k in kinds):
            details.append({"path": "mask_inputs", "message": f"a list of input types among {', '.join(INPUT_TYPES)}"})


def public(row: BotRow) -> dict[str, Any]:
    """The privacy fields as the API shows them."""
    return {"retention_days": row.retention_days if row.retention_days is not None else RETENTION_DEFAULT,
            "mask_keys": json.loads(row.mask_keys or "[]"), "mask_inputs": json.loads(row.mask_inputs or "[]")}


def apply(row: BotRow, values: dict[str, Any]) -> dict[str, Any]:
    """Set the privacy fields present in `values` on the row; returns {field: {"from", "to"}} of those changed."""
    before = public(row)
    if "retention_days" in values:
        row.retention_days = values["retention_days"]
    if "mask_keys" in values:
        row.mask_keys = json.dumps(sorted(set(values["mask_keys"])))
    if "mask_inputs" in values:
        row.mask_inputs = json.dumps([k for k in INPUT_TYPES if k in values["mask_inputs"]])
    after = public(row)
    return {name: {"from": before[name], "to": after[name]} for name in FIELDS if before[name] != after[name]}


def user_id_problem(raw: str) -> str | None:
    """Why `raw` is not a MAX user id, or None when it is one."""
    if (not raw.isascii() or not raw.isdigit() or len(raw) > 19 or str(int(raw)) != raw
            or not 0 < int(raw) <= USER_ID_MAX):
        return (f"'{raw[:40]}' is not a MAX user id: use the number from the dialog's webhook updates, "
                f"a whole number from 1 to {USER_ID_MAX}.")
    return None
