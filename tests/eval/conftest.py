"""A tiny dataset written by the tests themselves (no real data, no model)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

CORPORA = {
    "animals": (
        "The cat sleeps on the warm mat.\n"
        "Dogs bark at the mail carrier every morning.\n"
        "Owls hunt mice silently at night.\n"
        "Café owners feed stray cats — naïve but kind.\n"
    ),
    "space": (
        "Mars has two small moons named Phobos and Deimos.\n"
        "Jupiter is the largest planet of the solar system.\n"
        "Saturn's rings are made of ice and rock.\n"
    ),
}
QUESTIONS = [
    ("Where does the cat sleep?", "animals", ["The cat sleeps on the warm mat."]),
    (
        "When do dogs bark at the mail carrier?",
        "animals",
        ["Dogs bark at the mail carrier every morning."],
    ),
    (
        "What are the moons of Mars?",
        "space",
        ["Mars has two small moons named Phobos and Deimos.", "Jupiter is the largest"],
    ),
    ("What are Saturn's rings made of?", "space", ["Saturn's rings are made of ice and rock."]),
]


def _references(text: str, excerpts: list[str]) -> list[dict[str, object]]:
    refs = []
    for excerpt in excerpts:
        start = text.index(excerpt)
        refs.append({"content": excerpt, "start_index": start, "end_index": start + len(excerpt)})
    return refs


def _write_corpora(folder: Path, suffix: str) -> None:
    folder.mkdir(parents=True)
    for cid, text in CORPORA.items():
        (folder / f"{cid}{suffix}").write_text(text, encoding="utf-8")


@pytest.fixture
def chroma_dir(tmp_path: Path) -> Path:
    """A Chroma-format folder: questions_df.csv and corpora/*.md."""
    root = tmp_path / "chroma"
    _write_corpora(root / "corpora", ".md")
    with (root / "questions_df.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "references", "corpus_id"])
        for query, cid, excerpts in QUESTIONS:
            writer.writerow([query, json.dumps(_references(CORPORA[cid], excerpts)), cid])
    return root


@pytest.fixture
def jsonl_file(tmp_path: Path) -> Path:
    """The same questions as JSONL, corpora as files beside it."""
    root = tmp_path / "jsonl"
    _write_corpora(root / "docs", ".txt")
    lines = []
    for query, cid, excerpts in QUESTIONS:
        gold = [
            {"source": f"docs/{cid}.txt", "start": r["start_index"], "end": r["end_index"]}
            for r in _references(CORPORA[cid], excerpts)
        ]
        lines.append(json.dumps({"query": query, "gold": gold}))
    path = root / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
