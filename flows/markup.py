"""MAX's message markup (`format`: markdown or html): the tags it shows, balance, escaping, look-alikes."""
from __future__ import annotations

import re

from flows.said import Said

FORMATS = ("markdown", "html")
# The html tags MAX renders (max-bot-api.md); it strips any other, so a document may use only these.
HTML_TAGS = ("b", "i", "u", "s", "code", "pre", "a", "mark", "blockquote", "h1")
# A tag as MAX reads one; a `<` that starts nothing like it is literal text.
HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s[^<>]*)?)(/?)>")
HREF = re.compile(r"""\s*href\s*=\s*(?:"[^"]*"|'[^']*')\s*""")
PICTURE_URL = re.compile(r"(?i:https)://[^\s/?#]+\S*")

# Markup that reads as MAX markdown: doubled markers around a word, a link, code, a heading or a quote.
_MARKDOWN = re.compile(
    r"\*\*[^*\n]+\*\*|~~[^~\n]+~~|\+\+[^+\n]+\+\+|\^\^[^^\n]+\^\^"
    r"|(?<![\w*])\*[^*\s][^*\n]*(?<!\s)\*(?![\w*])"
    r"|`[^`\n]+`|\[[^\]\n]+\]\((?:https?|max)://[^)\s]+\)|^#{1,6} \S|^> \S",
    re.MULTILINE)
_KNOWN_TAG = re.compile(r"</?(?:" + "|".join(HTML_TAGS) + r")(?:\s[^<>]*)?>", re.IGNORECASE)

_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})
# MAX's markdown markers a value could open or close; `#` and `>` only mean something at a line's start. `_`
# is no MAX marker: user names and e-mail addresses keep theirs as typed.
_MARKDOWN_MARKER = re.compile(r"[\\*~`\[\]]|\+(?=\+)|(?<=\+)\+|\^(?=\^)|(?<=\^)\^|(?:^|(?<=\n))[#>]")


def html_problem(text: str) -> Said | None:
    """The first reason MAX would not show this html as written (a foreign or unbalanced tag), or None."""
    if "<" not in text:
        return None
    open_tags: list[str] = []
    for m in HTML_TAG.finditer(text):
        closing, name, attributes, self_closing = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
        tag = m.group(0)
        if name not in HTML_TAGS:
            return Said(f"{tag} is not a tag MAX shows; use only {', '.join(f'<{t}>' for t in HTML_TAGS)},"
                        " or write &lt; for a literal <", "html_unknown_tag", tag=tag)
        if self_closing:
            return Said(f"{tag} closes itself; write <{name}>...</{name}>", "html_bad_attribute", tag=tag)
        if closing:
            if attributes.strip():
                return Said(f"{tag}: a closing tag takes no attributes; write </{name}>", "html_bad_attribute",
                            tag=tag)
            if not open_tags:
                return Said(f"{tag} closes a tag that was never opened; remove it or add <{name}> before it",
                            "html_never_opened", tag=tag)
            if open_tags[-1] != name:
                return Said(f"{tag} closes <{name}> while <{open_tags[-1]}> is still open; close <{open_tags[-1]}>"
                            " first", "html_crossed", tag=name, open=open_tags[-1])
            open_tags.pop()
            continue
        if attributes.strip() and not (name == "a" and HREF.fullmatch(attributes)):
            return Said(f'{tag}: only <a> takes an attribute, href="..."; remove the rest'
                        if name != "a" else f'{tag}: write the link as <a href="https://...">', "html_bad_attribute",
                        tag=tag)
        open_tags.append(name)
    if open_tags:
        return Said(f"<{open_tags[-1]}> is opened but never closed; add </{open_tags[-1]}>", "html_never_closed",
                    tag=open_tags[-1])
    return None


def looks_marked_up(text: str) -> bool:
    """Whether a text meant as plain reads like markdown or MAX's html (its markers would show as typed)."""
    return _MARKDOWN.search(text) is not None or _KNOWN_TAG.search(text) is not None


def escape_html(value: str) -> str:
    """A value shown literally inside html text or an attribute."""
    return value.translate(_HTML_ESCAPES)


def escape_markdown(value: str) -> str:
    """A value shown literally inside MAX markdown: each marker it holds gets a backslash."""
    if _MARKDOWN_MARKER.search(value) is None:  # the usual value (a name, a number): nothing to mark
        return value
    return _MARKDOWN_MARKER.sub(r"\\\g<0>", value)


ESCAPES = {"html": escape_html, "markdown": escape_markdown}
