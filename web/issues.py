"""Validation issues as the designer shows them: a human title and sentence per code, one line per problem.

The API keeps one issue per state; here the issues of one code that share a cause are one line naming
all their states (three states without a way to a final state are one missing final state).
"""
from __future__ import annotations

from typing import Any, Callable

from web.i18n import N_
from web.i18n import gettext as _
from web.i18n import language_name
from web.i18n import ngettext

TITLES = {
    "no_start": N_("No start state"),
    "unknown_state": N_("Missing state"),
    "duplicate_id": N_("Repeated id"),
    "unreachable_state": N_("Unreachable state"),
    "dead_end": N_("Dead end"),
    "no_path_to_final": N_("No way to the end"),
    "missing_cancel": N_("No way out"),
    "ambiguous_transition": N_("Competing transitions"),
    "message_too_long": N_("Text too long"),
    "undefined_variable": N_("Data not collected"),
    "final_has_exit": N_("Exit from a final state"),
    "unreachable_transition": N_("Transition never fires"),
    "unformatted_markup": N_("Markup shown as typed"),
    "missing_translation": N_("Translation missing"),
}


def _guillemets(name: str) -> str:
    return f"«{name}»"


def quoted(ids: list[str], said: Callable[[str], str] = _guillemets) -> str:
    """«a», «b» and «c» (guillemets read well in both languages and never look like code)."""
    if not ids:
        return ""
    shown = [said(i) for i in ids[:5]]
    if len(ids) > 5:
        shown.append(_("%(n)s more") % {"n": len(ids) - 5})
    if len(shown) == 1:
        return shown[0]
    return _("%(list)s and %(last)s") % {"list": ", ".join(shown[:-1]), "last": shown[-1]}


class Names:
    """States by their titles and transitions by the states they join, as the canvas shows them; the id only
    where a state has no title (or does not exist)."""

    def __init__(self, document: dict[str, Any] | None = None) -> None:
        self.titles: dict[str, str] = {}
        self.ends: dict[str, tuple[str, str]] = {}
        for st in (document or {}).get("states") or []:
            if isinstance(st, dict) and isinstance(st.get("title"), str) and st["title"].strip():
                self.titles[str(st.get("id"))] = st["title"]
        for tr in (document or {}).get("transitions") or []:
            if isinstance(tr, dict) and isinstance(tr.get("from"), str) and isinstance(tr.get("to"), str):
                self.ends.setdefault(str(tr.get("id")), (tr["from"], tr["to"]))

    def state(self, sid: str) -> str:
        return f"«{self.titles.get(sid, sid)}»"

    def transition(self, tid: str) -> str:
        if tid not in self.ends:
            return f"«{tid}»"
        source, target = self.ends[tid]
        return f"{self.state(source)} → {self.state(target)}"


def sentence(code: str, states: list[str], transitions: list[str], params: dict[str, Any], no_final: bool,
             names: Names | None = None) -> str:
    """The sentence for one (grouped) issue from its code and params, telling what to do in the editor's words."""
    names = names or Names()
    s, t, n = quoted(states, names.state), quoted(transitions, names.transition), len(states)
    if "more" in params:
        more = int(params["more"])
        return ngettext("%(n)s more issue like these is not listed; fix these and check again to see it.",
                        "%(n)s more issues like these are not listed; fix these and check again to see them.",
                        more) % {"n": more}
    if code == "no_start":
        return _("Tick “Start state” on the state where a new dialog begins.")
    if code == "unknown_state":
        return _("There is no state %(s)s, but %(t)s leads to it. Create that state or choose another target.") \
            % {"s": s, "t": t} if transitions else _("The start state %(s)s does not exist.") % {"s": s}
    if code == "duplicate_id":  # the shared id is the problem itself: said as it is
        return _("Several states or transitions share the id %(s)s. Give each its own id.") \
            % {"s": quoted(transitions) if transitions else quoted(states)}
    if code == "unreachable_state":
        return ngettext("State %(s)s cannot be reached from the start. Lead a transition into it or delete it.",
                        "States %(s)s cannot be reached from the start. Lead transitions into them or delete them.",
                        n) % {"s": s}
    if code == "dead_end":
        return ngettext("State %(s)s has no transition out, so a dialog stops there. Add a transition or "
                        "tick “Final state”.",
                        "States %(s)s have no transition out, so a dialog stops there. Add transitions or "
                        "tick “Final state”.", n) % {"s": s}
    if code == "no_path_to_final":
        if no_final:
            return _("The flow has no final state, so no dialog can end (%(s)s). Tick “Final state” on the "
                     "state where the dialog ends.") % {"s": s}
        return ngettext("No final state can be reached from %(s)s. Add a transition towards a final state.",
                        "No final state can be reached from %(s)s. Add transitions towards a final state.",
                        n) % {"s": s}
    if code == "missing_cancel":
        return _("A user in %(s)s cannot leave early: the cancel command is off and no button or text leads "
                 "to a final state. Turn cancel on in the flow settings, or add a “Cancel” button.") % {"s": s}
    if code == "ambiguous_transition":
        return _("Of the transitions %(t)s from %(s)s, a later one can never fire. Reorder them, merge them or "
                 "add a condition.") % {"t": t, "s": s}
    if code == "message_too_long":
        return _("A message or button text in %(s)s is longer than MAX allows. Shorten it or split it into "
                 "several messages.") % {"s": s}
    if code == "undefined_variable":
        key = params.get("key")
        return _("A text in %(s)s inserts %(v)s, which may not be collected by then.") \
            % {"s": s, "v": quoted([str(key)]) if key else "{…}"}
    if code == "final_has_exit":
        return _("%(s)s is final, so the dialog ends there and %(t)s never fires. Remove the transition or "
                 "untick “Final state”.") % {"s": s, "t": t}
    if code == "unreachable_transition":
        return _("Transition %(t)s from %(s)s can never fire: its trigger cannot happen in that state.") \
            % {"t": t, "s": s}
    if code == "unformatted_markup":
        return _("A message in %(s)s looks like markdown or html, but its format is plain, so users see the "
                 "markers as typed. Choose a format for it, or remove the markers.") % {"s": s}
    if code == "missing_translation":
        count, lang = int(params.get("count") or 0), str(params.get("language") or "")
        if count and lang:
            return ngettext("%(n)s text has no %(lang)s translation, so a dialog in that language gets the default "
                            "language's text. Fill it in the translation table.",
                            "%(n)s texts have no %(lang)s translation, so a dialog in that language gets the default "
                            "language's text. Fill them in the translation table.", count) \
                % {"n": count, "lang": language_name(lang)}
        return _("Some texts have no translation to one of the flow's languages; fill them in the translation "
                 "table.")
    return _("This flow has a problem the editor cannot describe yet; the checks in the flow's validation name it.")


# Codes whose issues name one state each and share one cause, so they read as one line.
GROUPED = ("no_path_to_final", "unreachable_state", "dead_end")


def group_issues(issues: list[dict[str, Any]], no_final: bool | None = None,
                 document: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The issues as lines to show: errors first, grouped codes merged, each with title and sentence (states
    named by the titles `document` gives them, the ids kept for a hover)."""
    names = Names(document)
    if no_final is None:
        no_final = any((i.get("params") or {}).get("no_final") for i in issues if isinstance(i, dict))
    merged: list[dict[str, Any]] = []
    by_code: dict[str, dict[str, Any]] = {}
    for item in issues:
        code = str(item.get("code", ""))
        states = [str(x) for x in item.get("states") or []]
        transitions = [str(x) for x in item.get("transitions") or []]
        summary = "more" in (item.get("params") or {})
        if code in GROUPED and code in by_code and not summary:
            by_code[code]["states"] += [x for x in states if x not in by_code[code]["states"]]
            by_code[code]["count"] += 1
            continue
        line = {"code": code, "severity": item.get("severity", "error"), "states": states,
                "transitions": transitions, "params": dict(item.get("params") or {}), "count": 1}
        merged.append(line)
        if code in GROUPED and not summary:
            by_code[code] = line
    for line in merged:
        line["title"] = _(TITLES[line["code"]]) if line["code"] in TITLES else _("Problem")
        line["text"] = sentence(line["code"], line["states"], line["transitions"], line["params"], no_final, names)
        line["ids"] = ", ".join(line["states"] + line["transitions"])
    return sorted(merged, key=lambda line: line["severity"] != "error")


def issues_pane(issues: list[dict[str, Any]], no_final: bool, document: dict[str, Any] | None = None) -> dict[str, Any]:
    """What _partials/issues.html draws: the lines, the summary, and the API's issues for the canvas marks."""
    lines = group_issues(issues, no_final, document)
    errors = sum(1 for line in lines if line["severity"] == "error")
    warnings = len(lines) - errors
    summary = (ngettext("%(n)s error", "%(n)s errors", errors) % {"n": errors} + ", "
               + ngettext("%(n)s warning", "%(n)s warnings", warnings) % {"n": warnings}) if lines else _("No issues")
    return {"lines": lines, "errors": errors, "summary": summary, "raw": issues}
