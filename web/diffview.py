"""A semantic diff laid out for drawing: both documents' states and transitions, each marked added,
removed, changed or same, with the changed fields listed."""
from __future__ import annotations

import json
from typing import Any

from flows.load import normalise


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def _label(tr: dict[str, Any]) -> str:
    on = tr.get("on", "?")
    detail = {"button": tr.get("payload"), "event": tr.get("name"),
              "text": ", ".join(tr.get("match") or []) or tr.get("pattern"),
              "timeout": f"{tr.get('after')}s" if tr.get("after") is not None else None}.get(on)
    return f"{on}: {detail}" if detail else on


def _status(key: str, section: dict[str, Any]) -> str:
    if key in section["added"]:
        return "added"
    if key in section["removed"]:
        return "removed"
    if any(c["id"] == key for c in section["changed"]):
        return "changed"
    return "same"


def _ids(document: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    return {str(e.get("id")): e for e in document.get(name) or [] if isinstance(e, dict)}


def diff_graph(old: dict[str, Any], new: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Nodes and edges of both documents (new first, then what was removed), each with its diff status."""
    old, new = normalise(old), normalise(new)
    layout = {**(old.get("layout") or {}), **(new.get("layout") or {})}
    old_states, new_states = _ids(old, "states"), _ids(new, "states")
    nodes = []
    for sid, state in {**old_states, **new_states}.items():
        nodes.append({"id": sid, "label": state.get("title") or sid, "status": _status(sid, result["states"]),
                      "final": bool(state.get("final")), "position": layout.get(sid)})
    edges = []
    for tid, tr in {**_ids(old, "transitions"), **_ids(new, "transitions")}.items():
        if tr.get("from") in old_states or tr.get("from") in new_states:
            edges.append({"id": tid, "source": tr.get("from"), "target": tr.get("to"), "label": _label(tr),
                          "status": _status(tid, result["transitions"])})
    return {"nodes": nodes, "edges": edges, "start": new.get("start")}


def change_lines(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Readable rows: what was added, removed, and each changed field with its old and new value."""
    rows: list[dict[str, Any]] = []
    for key in ("title", "start"):
        if result.get(key):
            rows.append({"kind": "changed", "what": key, "fields": [
                {"field": key, "from": _short(result[key]["from"]), "to": _short(result[key]["to"])}]})
    for section, name in (("states", "state"), ("transitions", "transition")):
        part = result[section]
        rows += [{"kind": "added", "what": f"{name} {key}", "fields": []} for key in part["added"]]
        rows += [{"kind": "removed", "what": f"{name} {key}", "fields": []} for key in part["removed"]]
        rows += [{"kind": "changed", "what": f"{name} {c['id']}",
                  "fields": [{"field": f["field"], "from": _short(f["from"]), "to": _short(f["to"])}
                             for f in c["fields"]]} for c in part["changed"]]
    if result["transitions"].get("order"):
        rows.append({"kind": "changed", "what": "transition order", "fields": [
            {"field": "order", "from": ", ".join(result["transitions"]["order"]["from"]),
             "to": ", ".join(result["transitions"]["order"]["to"])}]})
    for section in ("settings", "commands", "other"):
        if result.get(section):
            rows.append({"kind": "changed", "what": section, "fields": [
                {"field": f["field"], "from": _short(f["from"]), "to": _short(f["to"])} for f in result[section]]})
    return rows
