"""The ingest progress bars: the stored bar has a total (and so a rate and a time left)
from the first document chunked, exact once every document is chunked (issue 34, item 1)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fissure.ingest.progress import Progress, expected_chunks


def test_the_total_is_extrapolated_from_the_documents_chunked_so_far() -> None:
    assert expected_chunks(0, 0, 10) == 0
    assert expected_chunks(30, 3, 10) == 100
    assert expected_chunks(7, 10, 10) == 7  # all chunked: exact


@given(st.lists(st.integers(0, 500), min_size=1, max_size=40))
def test_the_estimate_is_exact_once_every_document_is_chunked(counts: list[int]) -> None:
    with Progress(False, len(counts)) as bar:
        for i, n in enumerate(counts):
            bar.chunked(f"d{i}", n)
        assert bar.expected() == sum(counts)


def test_the_stored_bar_has_a_total_rate_and_eta_while_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    with Progress(True, 4) as bar:
        bar.chunked("a.md", 10)
        stored = bar._bars.tasks[1]
        assert stored.total == 40  # one of four documents: 10 each expected
        bar.stored(10)
        bar.chunked("b.md", 30)
        assert stored.total == 80  # 40 cut, 20 each expected for the other two
        bar.chunked("c.md", 5)
        bar.chunked("d.md", 5)
        assert stored.total == 50  # every document chunked: exact
        bar.stored(40)
        assert stored.completed == stored.total == 50
        assert stored.time_remaining is not None
    drawn = err.getvalue()
    assert "stored" in drawn and "50/50" in drawn and "eta" in drawn, drawn
    assert "/s" in drawn, drawn


def test_the_final_total_is_what_was_stored() -> None:
    with Progress(True, 2) as bar:
        bar.chunked("a.md", 10)
        bar.chunked("b.md", 10)
        bar.stored(12)  # eight were duplicates or failed to store
    assert bar._bars.tasks[1].total == 12
