"""HTML nesting capped before the tree is built.

An HTML tree builder checks the stack of open elements for every block element it inserts
(``<div>`` closes an open ``<p>`` "in button scope"), so 300,000 nested ``<div>`` take
minutes: the work is quadratic in the depth. :func:`cap_depth` measures the nesting from
the tags alone and, past the limit, drops the deeper tags while keeping their text, as
browsers stop nesting at a fixed depth too. Elements the parser closes by itself (``<p>``,
``<li>``, table cells …) and void elements do not count, nor do self-closed tags that are
not HTML elements (SVG's ``<path/>``; in HTML itself ``<div/>`` stays open); comments and
the raw text of ``<script>``, ``<style>`` and the like are left out.

Measuring is one pass of regular expressions and a cumulative sum (about 0.1 s for 2 MB);
only a document that is too deep is rewritten, tag by tag.
"""

from __future__ import annotations

import re

import numpy as np

# fmt: off
_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
    "param", "source", "track", "wbr",
})
# Closed implicitly by a sibling or an ancestor's end: the open stack does not grow.
_IMPLIED = frozenset({
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot",
    "rb", "rt", "rtc", "rp", "colgroup", "caption",
})
# HTML elements that stay open when written self-closed (``<div/>``).
_HTML = frozenset({
    "a", "abbr", "address", "article", "aside", "b", "bdi", "bdo", "blockquote", "body",
    "button", "center", "cite", "code", "data", "del", "details", "dfn", "dialog", "dir",
    "div", "dl", "em", "fieldset", "figcaption", "figure", "font", "footer", "form", "h1",
    "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "html", "i", "ins", "kbd", "label",
    "legend", "main", "mark", "menu", "nav", "object", "ol", "output", "pre", "q", "ruby",
    "s", "samp", "search", "section", "select", "small", "span", "strong", "sub", "summary",
    "sup", "table", "time", "u", "ul", "var", "video", "audio", "canvas", "map",
})
# fmt: on
_RAW = "script|style|textarea|title|xmp|iframe|noembed|noframes|plaintext"
# Comments and raw text run to their end, or to the end of the input (as parsers read them).
_SKIPPED = re.compile(rf"<!--.*?(?:-->|\Z)|<({_RAW})\b.*?(?:</\1\s*>|\Z)", re.S | re.I)
_TAGS = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)[^>]*?(/?)>")


def cap_depth(html: str, limit: int) -> tuple[str, int]:
    """``html`` with tags nested deeper than ``limit`` removed, and the depth it had.

    Returns ``html`` itself (no copy) when it nests no deeper than ``limit``.
    """
    if html.count("<") <= limit:
        return html, 0  # too few tags to nest that deep
    tags = _TAGS.findall(_SKIPPED.sub(" ", html) if _SKIPPED.search(html) else html)
    steps = _steps(tags)
    deepest = _deepest(steps)
    if deepest <= limit:
        return html, deepest
    return _flatten(html, limit), deepest


def text_of(html: str) -> str:
    """The text of ``html`` without markup (comments, raw text and tags dropped, entities
    decoded, one line per block of text): for pages too big to build a tree for."""
    import html as entities

    bare = _TAGS.sub("\n", _SKIPPED.sub("\n", html))
    lines = (" ".join(line.split()) for line in entities.unescape(bare).splitlines())
    return "\n".join(line for line in lines if line)


def _steps(tags: list[tuple[str, str, str]]) -> list[int]:
    """+1 for a tag that opens a level, -1 for one that closes it, 0 otherwise."""
    steps = []
    for close, name, slash in tags:
        name = name.lower()
        if name in _VOID or name in _IMPLIED or (slash and name not in _HTML):
            steps.append(0)
        else:
            steps.append(-1 if close else 1)
    return steps


def _deepest(steps: list[int]) -> int:
    """The deepest level of a walk that never goes below zero."""
    if not steps:
        return 0
    walk = np.cumsum(np.asarray(steps, dtype=np.int64))
    floor = np.minimum.accumulate(np.minimum(walk, 0))  # an extra close tag is ignored
    return int((walk - floor).max())


def _flatten(html: str, limit: int) -> str:
    """The text without the tags that open (or close) levels past ``limit``."""
    out: list[str] = []
    depth = kept = pos = 0
    while True:
        skipped = _SKIPPED.search(html, pos)
        stop = skipped.start() if skipped else len(html)
        for match in _TAGS.finditer(html, pos, stop):
            (step,) = _steps([(match[1], match[2], match[3])])
            if step > 0:
                depth += 1
            if step and depth > limit:
                out.append(html[kept : match.start()])
                kept = match.end()
            if step < 0:
                depth = max(depth - 1, 0)
        if skipped is None:
            break
        pos = skipped.end()
    out.append(html[kept:])
    return "".join(out)
