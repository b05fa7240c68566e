"""docs/levels.md is checked against the code: the rank table, the text levels, hybrid's
worth of a rank and every format's level enum (sqlite-utils' habit: docs tested)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from enum import IntEnum
from pathlib import Path

import fissure.parse
from fissure import ranks
from fissure.ranks import Rank
from fissure.split import hybrid
from fissure.split import levels as lv
from fissure.types import Block

DOC = (Path(__file__).resolve().parent.parent / "docs" / "levels.md").read_text(encoding="utf-8")


def test_the_rank_table_is_the_code() -> None:
    assert ranks.markdown_table() in DOC


def test_the_text_levels_have_their_ranks() -> None:
    for cuts in (*lv.PROSE, None):
        boundary = ranks.CHAR if cuts is None else cuts.boundary
        assert f"\n| {boundary.name} | {Rank(boundary.rank).name} |" in DOC


def test_blocks_and_levels_share_the_scale() -> None:
    assert Block("section", 0, 1, 2).rank == Rank.H2 < Block("paragraph", 0, 1, 10).rank
    assert Block("heading", 0, 1, 9).rank == Rank.H6
    assert Block("section", 0, 1, 3).boundary == ("section 3", Rank.H3)
    assert Block("struct", 0, 1, 2).rank == Rank.GAP  # a kind not in the table
    assert lv.PARAGRAPH.boundary.rank == ranks.rank("paragraph")
    assert [c.boundary.rank for c in lv.PROSE] == sorted(c.boundary.rank for c in lv.PROSE)


def test_hybrid_worth_is_as_documented() -> None:
    worth = hybrid.WORTH
    assert set(worth) == set(Rank)
    steps = [round(worth[Rank.TITLE] - worth[r], 9) for r in Rank if r <= Rank.GAP]
    assert steps == [round(0.1 * r, 9) for r in Rank if r <= Rank.GAP]
    said = (
        f"`hybrid` values a cut by its rank: {worth[Rank.TITLE]:g} for TITLE down by 0.1 a "
        f"rank to {worth[Rank.GAP]:g} for GAP, {worth[Rank.LINE]:g}\nLINE, "
        f"{worth[Rank.SENTENCE]:g} SENTENCE, {worth[Rank.WORD]:g} WORD, "
        f"{worth[Rank.CHAR]:g} CHAR, less {hybrid.CHUNK_COST:g} for each chunk, plus half "
        "the semantic\nscore clipped to ±1."
    )
    assert said.replace("-", "−") in DOC
    assert hybrid.SEMANTIC_WEIGHT == 0.5


def _format_enums() -> dict[str, type[IntEnum]]:
    found: dict[str, type[IntEnum]] = {}
    for info in pkgutil.iter_modules(fissure.parse.__path__):
        module = importlib.import_module(f"fissure.parse.{info.name}")
        for name, value in vars(module).items():
            if (
                name.endswith("Level")
                and isinstance(value, type)
                and issubclass(value, IntEnum)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def _numbers(text: str) -> set[int]:
    out: set[int] = set()
    for a, b in re.findall(r"(\d+)(?:–(\d+))?", text):
        out.update(range(int(a), int(b or a) + 1))
    return out


def test_every_format_enum_is_in_the_table_with_its_values() -> None:
    section = DOC.split("## Format levels", 1)[1].split("\n## ", 1)[0]
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\|[^|]+\| `(\w+)` \|([^\n]+)\|$", section, re.M)
    }
    enums = _format_enums()
    assert set(rows) == set(enums)
    for name, enum in enums.items():
        assert {int(m) for m in enum} == _numbers(rows[name]), name
