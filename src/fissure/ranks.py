"""One scale of boundary strength for every format: the rank of a cut, lower is stronger.

A parser tags its blocks with its own format's levels (``MarkdownLevel``, ``PythonLevel``
…, ordered inside that format only). :data:`KIND_RANKS` maps every block kind — and, for
sections and headings, their level — onto one :class:`Rank` shared by all formats and by
the text levels (:mod:`fissure.split.levels`). This is the only place ranks are decided:
:attr:`fissure.types.Block.rank` reads it, the packer names and ranks each cut by it
(:func:`boundary`), ``hybrid``'s cut scoring reads the rank the packer recorded, and
``chunk.metadata["cut"]`` is the boundary's name. ``docs/levels.md`` prints this table and
a test checks it against the code.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class Rank(IntEnum):
    """Ranks of boundaries, strongest first. Kinds of equal strength share a rank."""

    TITLE = 0  # a heading of level 0 (a DOCX title); the start of the text
    H1 = 1
    H2 = 2
    H3 = 3  # also a class, a YAML document
    H4 = 4  # also a function, a page, front matter
    H5 = 5  # also a method, a run of imports
    H6 = 6  # and deeper headings; also a notebook cell
    BLOCK = 7  # paragraph, code, table, key
    GROUP = 8  # list, blockquote
    GAP = 9  # text between blocks, and every kind not in the table
    LINE = 10  # a line; a list item
    SENTENCE = 11  # a sentence; a table row
    WORD = 12
    CHAR = 13


class Boundary(NamedTuple):
    """A cut's name (as ``chunk.metadata["cut"]`` shows it) and its rank."""

    name: str
    rank: int


# Kinds whose rank is their level: a heading of level n ranks as Rank(n), up to H6.
HEADINGS = frozenset({"section", "heading"})

KIND_RANKS: dict[str, Rank] = {
    "document": Rank.H3,
    "class": Rank.H3,
    "function": Rank.H4,
    "page": Rank.H4,
    "front_matter": Rank.H4,
    "method": Rank.H5,
    "imports": Rank.H5,
    "cell": Rank.H6,
    "paragraph": Rank.BLOCK,
    "code": Rank.BLOCK,
    "table": Rank.BLOCK,
    "key": Rank.BLOCK,
    "list": Rank.GROUP,
    "blockquote": Rank.GROUP,
    "gap": Rank.GAP,
    "line": Rank.LINE,
    "item": Rank.LINE,
    "sentence": Rank.SENTENCE,
    "row": Rank.SENTENCE,
    "word": Rank.WORD,
    "char": Rank.CHAR,
}


def rank(kind: str, level: int = 0) -> Rank:
    """The rank of a block of ``kind`` at its format's ``level`` (only headings read it)."""
    if kind in HEADINGS:
        return Rank(min(max(int(level), 0), Rank.H6))
    return KIND_RANKS.get(kind, Rank.GAP)


def boundary(kind: str, level: int = 0) -> Boundary:
    """The cut in front of a block: ``section 2``/``heading 2`` for headings, else the
    kind, with its rank."""
    key = (kind, level, type(level))  # the type too: 2 and 2.0 are one key, two names
    found = _BOUNDARIES.get(key)
    if found is None:
        if kind in HEADINGS:
            found = Boundary(f"{kind} {level}", rank(kind, level))
        else:
            found = Boundary(kind, KIND_RANKS.get(kind, Rank.GAP))
        if len(_BOUNDARIES) < _KEEP:
            _BOUNDARIES[key] = found
    return found


# Every block's boundary is asked for once per packing, from a few dozen (kind, level)
# pairs: made once each (a Boundary is an immutable tuple). Bounded, for odd parsers.
_BOUNDARIES: dict[tuple[str, int, type], Boundary] = {}
_KEEP = 4096


# Boundaries that are not in front of a block.
START = Boundary("start", Rank.TITLE)  # in front of the first part; never scored
GAP = Boundary("gap", Rank.GAP)
CHAR = Boundary("char", Rank.CHAR)
BUDGET = Boundary("budget", Rank.CHAR)  # ``fixed``: wherever the budget ends a window


def markdown_table() -> str:
    """:data:`KIND_RANKS` as the Markdown table that ``docs/levels.md`` prints (a test
    checks that the page holds exactly this)."""
    rows = ["| rank | value | boundaries |", "|---|---:|---|"]
    for r in Rank:
        names = []
        if r <= Rank.H6:
            names.append(f"section/heading {r.value}" + (" and deeper" if r == Rank.H6 else ""))
        if r == Rank.TITLE:
            names.append("start")
        names += [kind for kind, at in KIND_RANKS.items() if at == r]
        if r == Rank.GAP:
            names.append("every other kind, `recursive`'s separators")
        rows.append(f"| {r.name} | {r.value} | {', '.join(names)} |")
    return "\n".join(rows) + "\n"
