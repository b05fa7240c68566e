"""A document stored with less structure than its format has is counted and named in the
run summary, beside its chunks: a fallback is loud, never a lost document."""

from __future__ import annotations

from pathlib import Path

from tests.ingest.conftest import run, write_corpus


def test_the_summary_names_the_documents_a_parser_fell_back_on(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", n=2)
    (corpus / "broken.json").write_text('{"name": "a value", "items": [1, 2,, 3]\n' * 20)
    summary = run(corpus, tmp_path / "store")
    assert not summary.errors
    assert [Path(source).name for source, _ in summary.fallbacks] == ["broken.json"]
    assert "parsed as plain text" in summary.fallbacks[0][1]
    assert summary.documents == 5  # two Markdown files, code, notes and the broken JSON
