"""``recursive``: the classic separator hierarchy, packed by the one packer (or its
compiled twin, for characters and literal separators)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from fissure._compiled import twin
from fissure.config import ChunkSettings
from fissure.ranks import CHAR, START
from fissure.size import Ruler
from fissure.split import levels as lv
from fissure.split.runs import Piece
from fissure.split.separators import DEFAULT, preset

_split = twin("fissure.split._split")  # None: the Python packer does it all
CharPacker: Any = None if _split is None else _split.CharPacker


def separator_levels(settings: ChunkSettings) -> tuple[lv.Cuts, ...]:
    """The recursive strategy's levels: given separators, a language preset or the default."""
    return _separator_levels(settings.separators, settings.separators_are_regex, settings.language)


@lru_cache(maxsize=64)
def _separator_levels(
    separators: tuple[str, ...] | None, are_regex: bool, language: str | None
) -> tuple[lv.Cuts, ...]:
    # Keyed by the three fields alone: hashing the whole settings per document costs more.
    if separators is not None:
        seps, regex = separators, are_regex
    elif language:
        seps, regex = preset(language), True
    else:
        seps, regex = DEFAULT, False
    return tuple(lv.separator_cuts(s, regex=regex) for s in seps if s)


def char_packer(
    settings: ChunkSettings, ruler: Ruler, budget: int
) -> Callable[[], list[Piece]] | None:
    """The compiled packer (``_split``) where it applies and was built: ``recursive``
    by characters with literal separators, under a character ceiling no tighter than the
    budget (so never the one that binds). It makes exactly the Python packer's pieces."""
    if CharPacker is None or settings.strategy != "recursive" or ruler.sizer.name != "chars":
        return None
    if settings.char_ceiling < budget:
        return None
    literal = _literal_levels(settings.separators, settings.separators_are_regex, settings.language)
    if literal is None:
        return None
    seps, cuts = literal
    return CharPacker(ruler.text, seps, cuts, START, CHAR, budget, Piece).run  # type: ignore[no-any-return]


@lru_cache(maxsize=64)
def _literal_levels(
    separators: tuple[str, ...] | None, are_regex: bool, language: str | None
) -> tuple[list[str], list[Any]] | None:
    """Separators and boundaries of the recursive levels, when all are literal."""
    levels = _separator_levels(separators, are_regex, language)
    seps = [c.literal for c in levels]
    if None in seps:
        return None
    return seps, [c.boundary for c in levels]  # type: ignore[return-value]
