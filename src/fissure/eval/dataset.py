"""Evaluation datasets: corpora (id → text) and questions whose answers are character spans.

Two on-disk formats are read, chosen explicitly by :func:`load_dataset`:

* **Chroma CSV** (the chunking-evaluation data): a folder with ``questions_df.csv``
  (``question``, ``references`` as a JSON list of ``{content, start_index, end_index}``,
  ``corpus_id``) and ``corpora/<corpus_id>.md``. Offsets are 0-based code-point offsets into
  the UTF-8-decoded corpus, end exclusive; every excerpt is checked against its text.
* **JSONL**: one ``{"query": ..., "gold": [{"source": ..., "start": ..., "end": ...}]}`` per
  line; ``source`` is a corpus file path, relative to the JSONL's folder (or ``corpora_root``),
  and doubles as the corpus id.

Corpus files are read with ``newline=""`` so offsets index the exact decoded text.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from fissure.errors import ConfigError, InputError
from fissure.eval.spans import Span

CHROMA_QUESTIONS = "questions_df.csv"
HALVES = ("all", "even", "odd")


@dataclass(frozen=True, slots=True)
class Question:
    """One query and where its answer is.

    Attributes:
        query: The question text.
        corpus_id: The corpus whose text the gold spans index.
        gold: Answer excerpts as half-open character spans, in file order.
    """

    query: str
    corpus_id: str
    gold: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Dataset:
    """Corpora and the questions about them.

    Attributes:
        name: A label for reports (the folder or file stem).
        corpora: Corpus id → full text, in the order the questions first name them.
        questions: The questions, in file order (the row position is the question id).
    """

    name: str
    corpora: dict[str, str]
    questions: tuple[Question, ...]

    def half(self, which: str) -> Dataset:
        """The questions at even or odd row positions (``"even"``/``"odd"``), or all of them
        (``"all"``); the corpora stay whole, so retrieval still searches every chunk.

        Choosing a configuration on one half and reporting it on the other is the honest
        way to tune on a single benchmark.

        Raises:
            ConfigError: ``which`` is none of the three.
        """
        if which == "all":
            return self
        if which not in HALVES:
            raise ConfigError(f"unknown question subset {which!r}: use all, even or odd")
        first = 0 if which == "even" else 1
        return Dataset(self.name, self.corpora, self.questions[first::2])


def _read_text(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError as exc:
        raise InputError(f"corpus file not found: {path} (check the dataset layout)") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"corpus file is not UTF-8: {path} ({exc})") from exc


def _check_span(text: str, span: Span, where: str) -> None:
    start, end = span
    if not (0 <= start < end <= len(text)):
        raise InputError(
            f"{where}: span ({start}, {end}) is outside the corpus (0, {len(text)}); "
            "offsets must be 0-based character offsets with start < end"
        )


def load_chroma(root: str | Path) -> Dataset:
    """Read a Chroma-format folder (``questions_df.csv`` and ``corpora/*.md``).

    Raises:
        InputError: A file is missing, or an excerpt's text differs from its span's text.
    """
    root = Path(root)
    path = root / CHROMA_QUESTIONS
    if not path.is_file():
        raise InputError(f"{path} not found: a Chroma dataset folder holds {CHROMA_QUESTIONS}")
    corpora: dict[str, str] = {}
    questions: list[Question] = []
    with path.open(encoding="utf-8", newline="") as fh:
        for row_no, row in enumerate(csv.DictReader(fh)):
            cid = row["corpus_id"]
            if cid not in corpora:
                corpora[cid] = _read_text(root / "corpora" / f"{cid}.md")
            text = corpora[cid]
            gold: list[Span] = []
            for ref in json.loads(row["references"]):
                span = (int(ref["start_index"]), int(ref["end_index"]))
                where = f"{path} row {row_no}"
                _check_span(text, span, where)
                if text[span[0] : span[1]] != ref["content"]:
                    raise InputError(
                        f"{where}: excerpt text differs from corpus[{span[0]}:{span[1]}]"
                    )
                gold.append(span)
            questions.append(Question(row["question"], cid, tuple(gold)))
    return Dataset(root.name, corpora, tuple(questions))


def load_jsonl(path: str | Path, corpora_root: str | Path | None = None) -> Dataset:
    """Read a JSONL question file whose gold spans name corpus files by ``source``.

    Args:
        path: The ``.jsonl`` file.
        corpora_root: Folder that ``source`` paths are relative to (default: the file's folder).

    Raises:
        InputError: A line is not valid JSON of the expected shape, or a span is out of range.
    """
    path = Path(path)
    root = Path(corpora_root) if corpora_root is not None else path.parent
    corpora: dict[str, str] = {}
    questions: list[Question] = []
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            try:
                record = json.loads(line)
                query = str(record["query"])
                refs = [(str(g["source"]), int(g["start"]), int(g["end"])) for g in record["gold"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f'{where}: expected {{"query": str, "gold": [{{"source", "start", "end"}}]}} '
                    f"({exc})"
                ) from exc
            sources = {s for s, _, _ in refs}
            if len(sources) != 1:
                raise InputError(f"{where}: gold spans must name exactly one source, got {sources}")
            source = sources.pop()
            if source not in corpora:
                corpora[source] = _read_text(root / source)
            for _, start, end in refs:
                _check_span(corpora[source], (start, end), where)
            gold = tuple(sorted((s, e) for _, s, e in refs))
            questions.append(Question(query, source, gold))
    return Dataset(path.stem, corpora, tuple(questions))


def load_dataset(path: str | Path) -> Dataset:
    """Read a dataset: a Chroma folder, or a ``.jsonl`` file (corpora beside it).

    Raises:
        InputError: ``path`` is neither.
    """
    path = Path(path)
    if path.is_dir() and (path / CHROMA_QUESTIONS).is_file():
        return load_chroma(path)
    if path.is_file() and path.suffix == ".jsonl":
        return load_jsonl(path)
    raise InputError(
        f"{path}: not a dataset; give a folder holding {CHROMA_QUESTIONS} and corpora/, "
        "or a .jsonl question file"
    )
