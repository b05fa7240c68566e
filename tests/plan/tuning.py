"""A small corpus with questions for the tune tests, written by the tests (no real data)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

NOUNS = (
    "harbour",
    "orchard",
    "furnace",
    "glacier",
    "library",
    "foundry",
    "lantern",
    "meadow",
    "quarry",
    "beacon",
    "canal",
    "vineyard",
    "bellows",
    "compass",
    "granary",
    "kiln",
)
PLACES = ("Arden", "Brisk", "Calder", "Dunmore", "Elsby", "Fenwick", "Garth", "Holm")
VERBS = ("stores", "warms", "guards", "counts", "repairs", "feeds", "lights", "measures")
THINGS = ("copper coins", "winter grain", "river stones", "old maps", "iron nails",
          "salt barrels", "wool bales", "glass beads")  # fmt: skip


def write_corpus(root: Path, n_docs: int = 4, per_section: int = 5, seed: int = 7) -> list[dict]:
    """Markdown documents under ``root`` and one question per sentence: returns rows of
    ``question``, ``corpus_id`` (the file name without ``.md``, as Chroma names corpora),
    ``quote`` and its ``start``."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in range(n_docs):
        parts = [f"# Town record {d}\n\n"]
        facts: list[tuple[str, str]] = []
        for section in range(3):
            parts.append(f"## Part {section} of record {d}\n\n")
            for _ in range(per_section):
                noun, place = rng.choice(NOUNS), rng.choice(PLACES)
                verb, thing = rng.choice(VERBS), rng.choice(THINGS)
                sentence = f"The {noun} of {place} {verb} {thing} for record {d}."
                if any(sentence == s for _, s in facts):
                    continue  # each answer once, so a quote has one place
                facts.append((f"Which {thing} does the {noun} of {place} keep in record {d}?",
                              sentence))  # fmt: skip
                parts.append(sentence + (" " if rng.random() < 0.6 else "\n\n"))
            parts.append("\n\n")
        text = "".join(parts)
        (root / f"record{d}.md").write_text(text, encoding="utf-8")
        cursor = 0
        for question, sentence in facts:
            start = text.index(sentence, cursor)
            cursor = start + 1
            rows.append({"question": question, "corpus_id": f"record{d}", "quote": sentence,
                         "start": start})  # fmt: skip
    return rows


def write_questions(path: Path, rows: list[dict], *, offsets: bool = True) -> None:
    """A Chroma-format CSV; ``offsets=False``: references are quoted text only."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "references", "corpus_id"])
        for r in rows:
            ref: dict[str, object] = {"content": r["quote"]}
            if offsets:
                ref |= {"start_index": r["start"], "end_index": r["start"] + len(r["quote"])}
            writer.writerow([r["question"], json.dumps([ref]), r["corpus_id"]])


def chroma_folder(root: Path) -> Path:
    """A Chroma dataset folder (``questions_df.csv`` and ``corpora/``) that both
    ``fissure tune`` and ``python -m fissure.eval`` read."""
    rows = write_corpus(root / "corpora")
    write_questions(root / "questions_df.csv", rows)
    return root
