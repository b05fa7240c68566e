"""Snapshot tests of the structural chunker over the committed corpus (STYLE habit 12).

Every file of ``tests/corpus/`` (all formats) and ``samples/`` is parsed by its detected
format and chunked by ``structural`` at two budgets. The invariants are asserted first
(see ``tests/chunk_checks.py``); then a compact view of the chunks (offsets, lines, size,
headings, entity, page, cell, the ``cut``/``block``/``oversize`` metadata and the first 40
characters) is compared with ``tests/snapshots/<file>.json``.

After an intended change to a parser or the packer, review the diff and rewrite the
snapshots with::

    FISSURE_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_corpus_snapshots.py

A missing snapshot fails unless that variable is set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fissure import Chunker
from fissure.parse import parse
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
SNAPSHOTS = ROOT / "tests" / "snapshots"
NOT_DOCUMENTS = {"ORIGIN.md", "make_binary.py"}
# A small budget that makes every file split, and a roomier one with a different tokenizer.
BUDGETS = (("minilm", 64), ("cl100k_base", 128))
UPDATE = os.environ.get("FISSURE_UPDATE_SNAPSHOTS") == "1"


def corpus_files() -> list[Path]:
    """Every document of the corpus and the samples, in a stable order."""
    found = [
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in NOT_DOCUMENTS and p.relative_to(CORPUS).parts[0] != "fuzz"
    ]  # fuzzing's finds: test_fuzz.py
    found += [p for p in (ROOT / "samples").iterdir() if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(ROOT).as_posix())


FILES = corpus_files()


def snapshot_path(path: Path) -> Path:
    name = path.relative_to(ROOT).as_posix().removeprefix("tests/").replace("/", "__")
    return SNAPSHOTS / f"{name}.json"


def compact(chunk: Any) -> dict[str, Any]:
    """The parts of a chunk worth pinning (``None`` and empty fields left out)."""
    meta = chunk.metadata
    row = {
        "start": chunk.start,
        "end": chunk.end,
        "lines": list(chunk.lines),
        "n_tokens": chunk.n_tokens,
        "headings": list(chunk.headings),
        "entity": chunk.entity,
        "page": chunk.page,
        "cell": chunk.cell,
        "cut": meta.get("cut"),
        "block": meta.get("block"),
        "oversize": meta.get("oversize"),
        "head": chunk.text[:40],
    }
    return {k: v for k, v in row.items() if v is not None and v != []}


def render(snapshot: dict[str, Any]) -> str:
    """JSON with one chunk per line, so that a diff shows which chunks moved."""
    lines = ["{"]
    keys = list(snapshot)
    for i, key in enumerate(keys):
        value = snapshot[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, list):
            lines.append(f"  {json.dumps(key)}: [")
            rows = [f"    {json.dumps(row, ensure_ascii=False)}" for row in value]
            lines.append(",\n".join(rows))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def chunkers() -> dict[str, Chunker]:
    return {
        f"{name}-{budget}": Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(name))
        for name, budget in BUDGETS
    }


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(ROOT).as_posix() for p in FILES])
def test_corpus_snapshot(path: Path, chunkers: dict[str, Chunker]) -> None:
    document = parse(path.read_bytes(), path.relative_to(ROOT).as_posix())
    snapshot: dict[str, Any] = {
        "mime": document.mime,
        "fallback": document.metadata.get("fallback"),
        "chars": len(document.text),
    }
    for key, chunker in chunkers.items():
        chunks = chunker.chunk_document(document)
        assert chunks, f"{path.name}: no chunks at {key}"
        assert_chunk_invariants(document, chunker, chunks)
        snapshot[key] = [compact(c) for c in chunks]
    target = snapshot_path(path)
    if UPDATE:
        target.parent.mkdir(exist_ok=True)
        target.write_text(render(snapshot), encoding="utf-8")
        return
    if not target.exists():
        pytest.fail(f"no snapshot {target.name}: run with FISSURE_UPDATE_SNAPSHOTS=1")
    expected = json.loads(target.read_text(encoding="utf-8"))
    actual = json.loads(render(snapshot))
    if actual != expected:
        pytest.fail(f"{target.name} differs:\n{_first_difference(expected, actual)}")


def _first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    hint = "(if intended: FISSURE_UPDATE_SNAPSHOTS=1, then review the diff)"
    for key in sorted(set(expected) | set(actual)):
        old, new = expected.get(key), actual.get(key)
        if old == new:
            continue
        if isinstance(old, list) and isinstance(new, list):
            for i in range(max(len(old), len(new))):
                a = old[i] if i < len(old) else None
                b = new[i] if i < len(new) else None
                if a != b:
                    return f"{key} chunk {i}:\n  expected {a}\n  actual   {b}\n{hint}"
        return f"{key}:\n  expected {old}\n  actual   {new}\n{hint}"
    return hint


def test_snapshots_have_documents() -> None:
    """A snapshot whose document was removed from the corpus is stale."""
    wanted = {snapshot_path(p).name for p in FILES}
    stale = sorted(p.name for p in SNAPSHOTS.glob("*.json") if p.name not in wanted)
    assert not stale, f"remove stale snapshots: {stale}"
