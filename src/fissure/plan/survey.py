"""A corpus at a glance: list every file, parse a sample, profile what the sample holds.

What :mod:`fissure.plan.recommend` and :mod:`fissure.plan.estimate` reason from: formats,
sizes, and per-document structure (headings, code entities, tables, pages), each counted
from the Block tree the format's parser built. The sample is drawn at random with a fixed
seed, so the same corpus gives the same survey; with ``sample`` at least the number of
files, every file is parsed and nothing is extrapolated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fissure.chunker import load_document
from fissure.detect import mimes as m
from fissure.errors import FissureError
from fissure.source.files import DEFAULT_MAX_BYTES, iter_files
from fissure.types import Block, Document

CODE_MIMES = frozenset({m.PYTHON, *m.CODE.values()})
# Titled blocks of these kinds are code entities (functions, methods, types).
ENTITY_KINDS = frozenset({"function", "method", "class", "struct", "interface", "impl",
                          "trait", "enum", "module", "namespace"})  # fmt: skip
# Units a chunker should keep whole when they fit: a function, a method, a table.
UNIT_KINDS = frozenset({"function", "method", "table"})


@dataclass(frozen=True, slots=True)
class Profile:
    """One sampled document: its format, size and structure.

    Attributes:
        source: The file.
        mime: Its detected format.
        n_bytes: Size on disk.
        n_chars: Length of the text fissure indexes.
        headings: Titled sections (Markdown, reStructuredText, HTML, DOCX, notebooks …).
        entities: Code entities (functions, methods, classes and other types).
        tables: Tables (a CSV file counts as one).
        pages: Pages (PDF).
        fallback: Why a coarser parser stood in, if one did.
    """

    source: str
    mime: str
    n_bytes: int
    n_chars: int
    headings: int
    entities: int
    tables: int
    pages: int
    fallback: str | None = None

    @property
    def is_code(self) -> bool:
        """Whether the document is source code."""
        return self.mime in CODE_MIMES


@dataclass
class Survey:
    """The corpus listing and its parsed sample.

    Attributes:
        files: How many files the paths list (readable or not).
        total_bytes: Their size on disk, summed.
        documents: The sampled documents, parsed (in listing order).
        profiles: One :class:`Profile` per sampled document, in the same order.
        skipped: Sampled files that could not be read as documents, with the reason.
    """

    files: int
    total_bytes: int
    documents: list[Document] = field(default_factory=list)
    profiles: list[Profile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def sampled_bytes(self) -> int:
        """Bytes of the sampled files (parsed or skipped)."""
        return sum(p.n_bytes for p in self.profiles) + sum(_size(path) for path, _ in self.skipped)

    @property
    def complete(self) -> bool:
        """Whether every listed file was sampled (figures are then exact, not scaled)."""
        return len(self.profiles) + len(self.skipped) == self.files

    @property
    def scale(self) -> float:
        """What to multiply a figure of the sample by to estimate the whole corpus: total
        bytes over sampled bytes (1 when every file was sampled). Unreadable sampled files
        count in the denominator, as their like elsewhere in the corpus add nothing."""
        sampled = self.sampled_bytes
        if self.complete or not sampled:
            return 1.0
        return self.total_bytes / sampled


def survey(
    paths: Sequence[str | Path],
    *,
    sample: int = 200,
    seed: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Survey:
    """List ``paths`` and parse up to ``sample`` of their files, drawn at random.

    Raises:
        InputError: A path does not exist.
        ConfigError: ``sample`` is below 1.
    """
    if sample < 1:
        from fissure.errors import ConfigError

        raise ConfigError(f"sample must be at least 1 file, got {sample}")
    listed = list(iter_files([Path(p) for p in paths], max_bytes=max_bytes))
    result = Survey(files=len(listed), total_bytes=sum(_size(f.path) for f in listed))
    chosen = listed if len(listed) <= sample else random.Random(seed).sample(listed, sample)
    order = {id(f): i for i, f in enumerate(listed)}
    for found in sorted(chosen, key=lambda f: order[id(f)]):
        if found.skip:
            result.skipped.append((str(found.path), found.skip))
            continue
        try:
            document = load_document(found.path)
        except FissureError as exc:
            result.skipped.append((str(found.path), str(exc)))
            continue
        result.documents.append(document)
        result.profiles.append(profile(document, _size(found.path)))
    return result


def profile(document: Document, n_bytes: int) -> Profile:
    """Count a parsed document's structure."""
    kinds: dict[str, int] = {}
    for block in walk(document.blocks):
        if block.kind == "section" and block.title or block.kind in ENTITY_KINDS and block.title:
            key = "headings" if block.kind == "section" else "entities"
        elif block.kind in ("table", "page"):
            key = block.kind + "s"
        else:
            continue
        kinds[key] = kinds.get(key, 0) + 1
    tables = kinds.get("tables", 0)  # a CSV is one table block
    fallback = document.metadata.get("fallback")
    return Profile(document.source, document.mime, n_bytes, len(document.text),
                   kinds.get("headings", 0), kinds.get("entities", 0), tables,
                   int(document.metadata.get("pages", kinds.get("pages", 0))),
                   str(fallback) if fallback else None)  # fmt: skip


def walk(blocks: Iterable[Block]) -> Iterable[Block]:
    """Every block of a tree, parents before their children."""
    for block in blocks:
        yield block
        yield from walk(block.children)


def _size(path: str | Path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
