"""Smoke test of bench.pdf_tables' scoring (no external data needed)."""

from __future__ import annotations

import pytest

pdf_tables = pytest.importorskip("bench.pdf_tables")


def test_identical_table_scores_one() -> None:
    truth = [["Name", "Value"], ["a", "1"], ["b", "2"]]
    scores = pdf_tables.cell_scores(pdf_tables.normalised(truth), pdf_tables.normalised(truth))
    assert scores["f1"] == 1.0


def test_extra_row_and_column_are_aligned_away() -> None:
    truth = pdf_tables.normalised([["Name", "Value"], ["a", "1"], ["b", "2"]])
    pred = pdf_tables.normalised(
        [["Table 1", "", ""], ["", "NAME", "value"], ["", "a", "1"], ["", "b", "3"]]
    )
    scores = pdf_tables.cell_scores(pred, truth)
    assert scores["recall"] == pytest.approx(5 / 6)
    assert scores["precision"] == pytest.approx(5 / 7)


def test_no_table_scores_zero() -> None:
    assert pdf_tables.score_table([], [["a"]], None)["f1"] == 0.0
