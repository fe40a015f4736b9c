"""Reading flow documents: text to data (`parse_text`), data to a typed Flow (`load`)."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import yaml

from flows.build import DEFAULT_COMMANDS, build, normalise
from flows.egress import webhook_problems
from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.fastcheck import fine_elements, well_formed
from flows.limits import MAX_DEPTH, MAX_DETAILS, MAX_EXPANDED_YAML, MAX_NUMBER
from flows.model import Flow
from flows.schema import format_problems
from flows.text_rule import UNCLEAN, unclean_at
from flows.unique_keys import DuplicateKey, UniqueKeysMixin, unique_object

__all__ = ["DEFAULT_COMMANDS", "build", "load", "load_text", "normalise", "parse_text"]


if TYPE_CHECKING:  # the same interface either way
    _BaseLoader = yaml.SafeLoader
else:
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: far faster


class _Loader(UniqueKeysMixin, _BaseLoader):
    """YAML that reads like JSON: only true/false are booleans (so `on:` stays a key), no dates, no key twice."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


# Deeper documents are read and then refused path by path (the shape check's limit is MAX_DEPTH); past
# this the text is refused unread, as libyaml's composer would overflow the C stack.
YAML_DEPTH_READ = 1000
_TOO_DEEP = f"The document is nested too deeply to read; a flow may nest at most {MAX_DEPTH} levels."
_TOO_LONG = (f"The document holds a number too long to read; numbers in a flow are at most 2^53 ({MAX_NUMBER:,})"
             " in magnitude.")


def _expanded_size(data: Any) -> tuple[int, bool]:
    """(values plus characters of text once every alias is written out, whether any alias occurs); a
    value that contains itself (an alias inside its own anchor) is refused."""
    sizes: dict[int, int] = {}  # per container, counted once however often aliases repeat it
    aliased = False
    open_ids: set[int] = set()  # containers being counted: the path from the top
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:  # a loop, not recursion: the YAML reader allows deeper nesting than Python's stack
        value, counted = stack.pop()
        key = id(value)
        children = value.values() if isinstance(value, dict) else value
        if counted:
            open_ids.discard(key)
            total = 1 + (sum(len(k) if isinstance(k, str) else 1 for k in value) if isinstance(value, dict) else 0)
            for child in children:
                if isinstance(child, (dict, list)):
                    total += sizes[id(child)]
                else:
                    total += 1 + (len(child) if isinstance(child, str) else 0)
            sizes[key] = total
            continue
        if key in sizes:
            aliased = True
            continue
        if key in open_ids:
            raise DocumentSyntaxError("The document uses a YAML alias (*name) inside the value it names, so it "
                                      "would repeat forever; write the value out instead.")
        open_ids.add(key)
        stack.append((value, True))
        stack.extend((child, False) for child in children if isinstance(child, (dict, list)))
    return sizes.get(id(data), 1), aliased


def _unshared(data: Any) -> Any:
    """A copy in which every alias is a value of its own, so changing one place never changes another."""
    def fresh(value: Any) -> Any:
        return {} if isinstance(value, dict) else [] if isinstance(value, list) else value

    top = fresh(data)
    stack = [(data, top)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in pairs:
            copy = fresh(value)
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
            if copy is not value:
                stack.append((value, copy))
    return top


def _expand_aliases(data: Any) -> Any:
    """The document with its YAML aliases (*name) written out; refused past MAX_EXPANDED_YAML."""
    if not isinstance(data, (dict, list)):
        return data
    size, aliased = _expanded_size(data)
    if not aliased:
        return data
    if size > MAX_EXPANDED_YAML:
        raise DocumentSyntaxError(
            f"The document's YAML aliases (*name) repeat so much that written out it would hold over "
            f"{MAX_EXPANDED_YAML:,} values and characters; write the repeated parts out or use fewer aliases.")
    return _unshared(data)


def _decode(text: str | bytes) -> str:
    if isinstance(text, str):
        return text
    try:
        return bytes(text).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentSyntaxError(
            f"The document is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
            " cannot be decoded; save the file as UTF-8.") from None


def json_problem(exc: json.JSONDecodeError) -> str:
    """What is wrong and where, as "Expecting value at line 1, column 5"."""
    # Python's own message for a raw control character already ends in "at" ("Invalid control character at").
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno}"


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=unique_object)
    except json.JSONDecodeError as exc:
        raise DocumentSyntaxError(f"The document is not valid JSON: {json_problem(exc)}.", "syntax_at",
                                  {"format": "JSON", "line": exc.lineno, "column": exc.colno}) from None
    except DuplicateKey as exc:
        raise DocumentSyntaxError(f"The document is not valid JSON: {exc}.") from None
    except RecursionError:
        raise DocumentSyntaxError(_TOO_DEEP) from None
    except ValueError:  # an integer too long to convert
        raise DocumentSyntaxError(_TOO_LONG) from None


def _nesting_past(text: str, limit: int) -> bool:
    """Whether the YAML text nests collections more than `limit` deep, read as a flat stream of events."""
    loader = _Loader(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()  # type: ignore[no-untyped-call]  # unannotated in PyYAML's stubs
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        loader.dispose()
    return False


def _parse_yaml(text: str) -> Any:
    try:
        # libyaml's composer recurses in C, past any Python recursion limit: 50,000 nested "[" (or "- - -")
        # would crash the process. Its parser is a flat loop, so the depth is measured on its events first.
        if _nesting_past(text, YAML_DEPTH_READ):
            raise DocumentSyntaxError(_TOO_DEEP)
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "unreadable text"
        place = {"format": "YAML", "line": mark.line + 1, "column": mark.column + 1} if mark else None
        raise DocumentSyntaxError(f"The document is not valid YAML: {problem}{where}.", "syntax_at" if mark else "",
                                  place) from None
    except yaml.YAMLError as exc:
        raise DocumentSyntaxError(f"The document is not valid YAML: {exc}.") from None
    except RecursionError:
        raise DocumentSyntaxError(_TOO_DEEP) from None
    except (ValueError, OverflowError):  # an integer too long to convert, a float past range
        raise DocumentSyntaxError(_TOO_LONG) from None
    return _expand_aliases(data)


def parse_text(text: str | bytes, fmt: str | None = None) -> Any:
    """JSON or YAML text (fmt "json" | "yaml" | None to sniff) to a dict; DocumentSyntaxError otherwise."""
    source = _decode(text)
    if fmt not in (None, "json", "yaml"):
        raise ValueError(f"unknown document format {fmt!r}; expected 'json' or 'yaml'")
    if fmt == "json":
        data = _parse_json(source)
    elif fmt == "yaml":
        data = _parse_yaml(source)
    else:
        try:
            data = _parse_json(source)
        except DocumentSyntaxError as json_error:
            try:
                data = _parse_yaml(source)
            except DocumentSyntaxError:
                # Text that looks like JSON gets the JSON error: it is the one the author can act on.
                if source.lstrip()[:1] in ("{", "["):
                    raise json_error from None
                raise
    _require_object(data)
    return data


def _require_object(data: Any) -> None:
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}"
        raise DocumentSyntaxError(
            f"A flow document must be an object (a mapping of fields) at the top, but this one is {what}.")


def _summary(count: int) -> str:
    if count == 1:
        return "The flow document has 1 problem; the detail names where and how to fix it."
    return f"The flow document has {count} problems; each detail names where and how to fix it."


def load(raw: Any, *, allow: Iterable[str] | None = ()) -> Flow:
    """Check a parsed document against the format and build the Flow; FlowFormatError lists every problem."""
    # `allow` lists the hosts and networks webhook actions may reach although they are local or private
    # (the deployment's BOTFLOW_ACTION_ALLOW); None skips that check (a version frozen earlier).
    _require_object(raw)
    # The quick check settles the usual, valid document; only a doubtful one pays for the detailed
    # checker, which names every problem.
    details = [] if well_formed(raw) else format_problems(raw, fine_elements(raw))
    if allow is not None:
        # A version frozen before the text rule still loads; what is saved from now on follows it.
        where = unclean_at(raw)
        if where is not None and where.lstrip(".") not in {detail["path"] for detail in details}:
            details.insert(0, {"path": where.lstrip("."), "message": f"this text {UNCLEAN}; remove it"})
        taken = {detail["path"] for detail in details}
        details += [detail for detail in webhook_problems(raw, allow) if detail["path"] not in taken]
    if details:
        raise FlowFormatError(_summary(len(details)), _listed(details))
    return build(normalise(raw))


def _listed(details: list[dict[str, str]]) -> list[dict[str, str]]:
    """The first MAX_DETAILS details, then one saying how many more there are (the answer stays small)."""
    if len(details) <= MAX_DETAILS:
        return details
    more = len(details) - MAX_DETAILS
    return details[:MAX_DETAILS] + [{"path": "", "message": f"{more:,} more problems are not listed; fix the ones"
                                                            " above and load the document again to see the rest"}]


def load_text(text: str | bytes, fmt: str | None = None, *, allow: Iterable[str] | None = ()) -> Flow:
    """`load(parse_text(text, fmt), allow=allow)`."""
    return load(parse_text(text, fmt), allow=allow)
