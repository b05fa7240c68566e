"""The PDF benchmarks' own logic: the eval's scoring on chunks whose answers are known, and
a smoke pass of the speed benchmark (timing is never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bench.pdf_eval import norm, score

ROOT = Path(__file__).resolve().parent.parent


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A tiny deterministic embedder: hashed word counts, unit length."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, sum(map(ord, word.strip("?:,."))) % 64] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_norm_agrees_across_extractors() -> None:
    assert norm("manage-\nment of the ﬁrst") == norm("management of the first")
    assert norm("Q3 | 4.2 | 3.9") == norm("Q3 4.2 3.9") == "q34239"


def test_score_counts_hits_strict_hits_headings_and_rows() -> None:
    chunks = {
        "a.pdf": [
            {"text": "Quarter | Revenue\nQ3 | 4.2", "headings": ["1 Sales"]},
            {"text": "Q4 4.9 cost notes", "headings": []},
        ],
    }
    questions = [
        {"kind": "table", "question": "what is the Revenue of Q3?", "answer": "4.2",
         "row": "Q3", "column": "Revenue"},
        {"kind": "table", "question": "what is the Revenue of Q4?", "answer": "4.9",
         "row": "Q4", "column": "Revenue"},
        {"kind": "section", "question": "sales", "answer": "no such words", "heading": "x"},
    ]  # fmt: skip
    rows = {"a.pdf": [["Q3", "4.2"], ["Q4", "4.9"], ["Q5", "5.0"]]}
    titles = {"a.pdf": ["1 Sales", "2 Costs"]}
    result = score(chunks, questions, rows, titles, bag_of_words, len)
    assert result["chunks"] == 2
    assert result["table"] == 1.0  # both answers are in the top 5 (there are only 2)
    assert result["strict"] == 0.5  # Q4's chunk does not name its column
    assert result["section"] == 0.0
    assert result["headings"] == 0.5 and result["rows"] == pytest.approx(2 / 3)
    assert result["tokens"] == len(chunks["a.pdf"][0]["text"]) + len(chunks["a.pdf"][1]["text"])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_pdf_speed_smoke(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.pdf_speed", "--repeats", "1", "--pages", "5",
           "--out", str(tmp_path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "pdf_speed.md").read_text(encoding="utf-8")
    assert "| text only (generated) | 1 | 5 |" in page
    assert "| tables (generated + Chromium) |" in page


def test_no_pdf_of_the_repository_or_the_machine_is_lost(tmp_path: Path) -> None:
    """``bench.pdf_losses`` over the committed corpus and /usr/share/doc's manuals: every
    PDF parses (a fallback is allowed and listed); the report says so."""
    from bench.pdf_losses import DEFAULT, check, render

    folders = [f for f in DEFAULT[:2] if f.is_dir()]
    found = check(folders)
    assert found["ok"] and not found["lost"]
    page = render(found, folders, "python -m bench.pdf_losses")
    assert "**0 lost**" in page
