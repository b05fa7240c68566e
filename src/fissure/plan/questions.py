"""Questions about a user's own corpus, in Chroma's format, with their answers located.

A questions file is a CSV with the columns of Chroma's ``questions_df.csv``: ``question``,
``references`` (a JSON list; each item ``{"content": TEXT, "start_index": N, "end_index": M}``,
or ``{"content": TEXT}`` alone, or a bare string of quoted text) and ``corpus_id`` (a file
under the corpus folder, by path or by name without its suffix; empty: the file that
holds the first reference). A reference is placed the way the evaluator places a peer's
chunk (:func:`fissure.eval.peers.locate`): at its offsets when the text there is the quote,
else where the quote occurs; one that occurs nowhere is left out and counted, and a
question with no reference left is left out too.

The corpus is every UTF-8 text file under the folder (``corpora/`` of a Chroma dataset
folder), hidden folders and the questions file itself skipped; all of them are searched, as
the store would search them. Corpora come in the order the questions first name them, then
the rest by path, so a Chroma dataset folder gives exactly
:func:`fissure.eval.dataset.load_chroma`'s dataset.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fissure.errors import InputError
from fissure.eval.dataset import CHROMA_QUESTIONS, Dataset, Question
from fissure.eval.peers import locate

COLUMNS = ("question", "references", "corpus_id")
MAX_FILE_BYTES = 20_000_000


@dataclass(frozen=True)
class Located:
    """A dataset built from a questions file, and what could not be placed.

    Attributes:
        dataset: Corpora and the questions kept.
        references: References read.
        unlocated: References whose text occurs nowhere in their corpus (left out).
        dropped: Questions left out: none of their references found, or no such corpus.
        files_skipped: Files under the folder that are not UTF-8 text, or too large.
    """

    dataset: Dataset
    references: int
    unlocated: int
    dropped: int
    files_skipped: int


def corpus_root(path: Path) -> Path:
    """Where the corpus files are: ``corpora/`` of a Chroma dataset folder, else ``path``."""
    if (path / CHROMA_QUESTIONS).is_file() and (path / "corpora").is_dir():
        return path / "corpora"
    return path


def default_questions(path: Path) -> Path | None:
    """A Chroma dataset folder's own ``questions_df.csv``, if ``path`` is one."""
    found = path / CHROMA_QUESTIONS
    return found if found.is_file() and (path / "corpora").is_dir() else None


def read_corpus(root: Path, exclude: Path | None = None) -> tuple[dict[str, str], int]:
    """Every UTF-8 text file under ``root`` by its path relative to it (``/``-separated),
    read with ``newline=""`` so offsets index the exact text; and how many were skipped.
    ``exclude`` (the questions file, when it lies in the corpus) is left out.

    Raises:
        InputError: ``root`` is not a folder, or holds no text file.
    """
    if not root.is_dir():
        raise InputError(f"{root} is not a folder: give the folder that holds your documents")
    texts: dict[str, str] = {}
    skipped = 0
    left_out = exclude.resolve() if exclude is not None else None
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(p.startswith(".") for p in rel.parts) or not path.is_file():
            continue
        if left_out is not None and path.resolve() == left_out:
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError("too large")
            with path.open(encoding="utf-8", newline="") as fh:
                text = fh.read()
            if "\x00" in text:
                raise ValueError("binary")
        except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
            skipped += 1
            continue
        if text.strip():
            texts[rel.as_posix()] = text
    if not texts:
        raise InputError(f"{root} holds no UTF-8 text file to tune on")
    return texts, skipped


def load_questions(path: Path, questions: Path) -> Located:
    """Read a corpus folder and a Chroma-format questions file, and place every answer.

    Raises:
        InputError: No such file, a malformed row (the message names the row), or no
            question whose answer could be placed.
    """
    texts, skipped = read_corpus(corpus_root(path), exclude=questions)
    ids = _Ids(texts)
    kept: list[Question] = []
    n_refs = unlocated = dropped = 0
    for _row, question, refs, cid in _rows(questions):
        n_refs += len(refs)
        key = ids.resolve(cid, refs)
        if key is None:
            unlocated += len(refs)
            dropped += 1
            continue
        spans, missing = locate(texts[key], refs)
        unlocated += missing
        if not spans:
            dropped += 1
            continue
        ids.use(key)
        kept.append(Question(question, key, tuple(sorted(spans))))
    if not kept:
        raise InputError(
            f"{questions}: no question's answer could be found in the corpus "
            f"{path} ({n_refs} references read); check the folder and the quotes"
        )
    corpora = {key: texts[key] for key in ids.order(texts)}
    name = path.name or str(path)
    return Located(Dataset(name, corpora, tuple(kept)), n_refs, unlocated, dropped, skipped)


def write_questions(path: Path, dataset: Dataset) -> None:
    """Write ``dataset``'s questions as a Chroma-format CSV (references with offsets)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for q in dataset.questions:
            text = dataset.corpora[q.corpus_id]
            refs = [{"content": text[s:e], "start_index": s, "end_index": e} for s, e in q.gold]
            writer.writerow([q.query, json.dumps(refs, ensure_ascii=False), q.corpus_id])


class _Ids:
    """Finds the corpus a question names, and keeps the order corpora are first named in."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.named: dict[str, None] = {}
        stems: dict[str, list[str]] = {}
        for rel in texts:
            stems.setdefault(rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel,
                             []).append(rel)  # fmt: skip
        self.stems = {stem: rels[0] for stem, rels in stems.items() if len(rels) == 1}
        self.aliases: dict[str, str] = {}

    def resolve(self, cid: str, refs: list[tuple[str, int | None]]) -> str | None:
        """The dataset key of corpus ``cid`` (``""``: the file holding the first quote)."""
        if not cid:
            quote = refs[0][0].strip() if refs else ""
            return next((rel for rel, t in self.texts.items() if quote and quote in t), None)
        if cid in self.aliases:
            return self.aliases[cid]
        if cid in self.texts:
            return cid
        rel = self.stems.get(cid)
        if rel is None:
            return None
        if rel in self.aliases:
            return self.aliases[rel]
        # Named by stem, as Chroma names its corpora: keep that name as the key (the
        # evaluator parses a corpus by its key's suffix, so a .py file keeps its path).
        if rel.endswith(".py"):
            return rel
        self.texts[cid] = self.texts.pop(rel)
        self.aliases[rel] = cid
        return cid

    def use(self, key: str) -> None:
        self.named.setdefault(key, None)

    def order(self, texts: dict[str, str]) -> list[str]:
        return [*self.named, *(k for k in texts if k not in self.named)]


def _rows(path: Path) -> Iterable[tuple[int, str, list[tuple[str, int | None]], str]]:
    """``(row, question, [(quote, start)], corpus_id)`` per row of a questions CSV."""
    try:
        fh = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"cannot read the questions file {path}: {exc}") from exc
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("question", "references") if c not in (reader.fieldnames or ())]
        if missing:
            raise InputError(f"{path}: a questions file needs the columns question, references "
                             f"(and corpus_id), as Chroma's {CHROMA_QUESTIONS}; missing "
                             f"{', '.join(missing)}")  # fmt: skip
        for row_no, row in enumerate(reader, 2):
            refs = _references(row.get("references") or "", f"{path}:{row_no}")
            yield row_no, (row.get("question") or "").strip(), refs, row.get("corpus_id") or ""


def _references(raw: str, where: str) -> list[tuple[str, int | None]]:
    try:
        items: Any = json.loads(raw)
        if not isinstance(items, list):
            raise TypeError("not a list")
        out: list[tuple[str, int | None]] = []
        for item in items:
            if isinstance(item, str):
                out.append((item, None))
                continue
            start = item.get("start_index")
            out.append((str(item["content"]), None if start is None else int(start)))
        return out
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(
            f'{where}: references must be a JSON list of {{"content": …, '
            f'"start_index": …, "end_index": …}} or of quoted strings ({exc})'
        ) from exc
