"""A smoke pass of ``bench.format_peers``: fissure's rows are exact and within budget."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_text_splitters")


@pytest.mark.slow
def test_smoke_markdown_rows_are_exact_and_within_budget() -> None:
    from bench import format_peers

    results = format_peers.main(["--smoke", "--only", "markdown"])
    rows = results["formats"]["markdown"]["rows"]
    ours = [r for r in rows if r["system"] == format_peers.FISSURE]
    assert [r["budget"] for r in ours] == ["1000 chars", "254 MiniLM tokens"]
    for row in ours:
        assert row["chunks"] > 0 and row["cpu_s"]
        assert row["inexact"] == 0 and row["over_budget"] == 0 and row["not_in_source"] == 0
    # every peer either ran (a time per repeat) or says why it did not
    assert all(r["cpu_s"] or r.get("error") for r in rows)
