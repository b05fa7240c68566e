"""Loaders of the Chroma CSV and JSONL formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fissure.errors import ConfigError, InputError
from fissure.eval.dataset import load_chroma, load_dataset, load_jsonl

from .conftest import CORPORA, QUESTIONS


def test_chroma_loader_reads_spans_that_slice_back(chroma_dir: Path) -> None:
    data = load_chroma(chroma_dir)
    assert list(data.corpora) == ["animals", "space"]
    assert data.corpora["animals"] == CORPORA["animals"]
    assert len(data.questions) == len(QUESTIONS)
    q = data.questions[2]
    assert q.corpus_id == "space"
    assert [data.corpora["space"][s:e] for s, e in q.gold] == QUESTIONS[2][2]


def test_chroma_loader_rejects_a_wrong_excerpt(chroma_dir: Path) -> None:
    path = chroma_dir / "questions_df.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("warm mat", "warm hat", 1))
    with pytest.raises(InputError, match="differs"):
        load_chroma(chroma_dir)


def test_jsonl_loader_matches_chroma(chroma_dir: Path, jsonl_file: Path) -> None:
    a, b = load_chroma(chroma_dir), load_jsonl(jsonl_file)
    assert [q.gold for q in a.questions] == [q.gold for q in b.questions]
    assert [q.query for q in a.questions] == [q.query for q in b.questions]
    assert b.questions[0].corpus_id == "docs/animals.txt"
    assert b.corpora["docs/space.txt"] == CORPORA["space"]


def test_jsonl_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "q", "gold": [{"source": "a.txt", "start": 2, "end": 9}]}))
    with pytest.raises(InputError, match="outside"):
        load_jsonl(bad)
    bad.write_text('{"query": "q"}\n')
    with pytest.raises(InputError, match="expected"):
        load_jsonl(bad)


def test_load_dataset_routes_by_shape(chroma_dir: Path, jsonl_file: Path, tmp_path: Path) -> None:
    assert load_dataset(chroma_dir).name == "chroma"
    assert load_dataset(jsonl_file).name == "questions"
    with pytest.raises(InputError, match="not a dataset"):
        load_dataset(tmp_path)


def test_halves_split_the_questions_by_row_and_keep_every_corpus(chroma_dir: Path) -> None:
    dataset = load_chroma(chroma_dir)
    even, odd = dataset.half("even"), dataset.half("odd")
    assert dataset.half("all") is dataset
    assert even.questions == dataset.questions[0::2] and odd.questions == dataset.questions[1::2]
    assert len(even.questions) + len(odd.questions) == len(dataset.questions)
    assert even.corpora == odd.corpora == dataset.corpora
    with pytest.raises(ConfigError, match="even or odd"):
        dataset.half("first")
