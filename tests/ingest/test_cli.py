"""The ingest, query, status and dlq commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from tests.ingest.conftest import run, write_corpus

runner = CliRunner()


def test_status_and_dlq_on_a_store(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=2)
    (root / "noise.txt").write_bytes(bytes(range(256)) * 4)
    store = tmp_path / "store"
    run(root, store)
    out = runner.invoke(app, ["status", "--store", str(store)])
    assert out.exit_code == 0, out.output
    assert "4 documents" in out.output and "1 failed" in out.output
    out = runner.invoke(app, ["dlq", "list", "--store", str(store)])
    assert out.exit_code == 0 and "noise.txt\tparse\tInputError" in out.output
    out = runner.invoke(app, ["dlq", "clear", "--store", str(store)])
    assert out.exit_code == 0 and "cleared 1" in out.output
    out = runner.invoke(app, ["dlq", "list", "--store", str(store)])
    assert "noise.txt" not in out.output


def test_errors_are_one_clean_line(tmp_path: Path) -> None:
    for args in (["query", "x", "--store", str(tmp_path / "none")],
                 ["status", "--store", str(tmp_path / "none")],
                 ["ingest", str(tmp_path / "missing"), "--store", str(tmp_path / "s"),
                  "--embedder", "nonsense"],
                 ["ingest", "git:/nowhere@HEAD", "--store", str(tmp_path / "s")]):  # fmt: skip
        out = runner.invoke(app, args)
        assert out.exit_code == 2, out.output
        assert "error:" in out.output and "Traceback" not in out.output


@pytest.mark.slow
def test_ingest_then_query_with_minilm(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=2)
    (root / "cooking.md").write_text("# Bread\n\nKnead the dough, let it rise, then bake it.\n")
    store = tmp_path / "store"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = runner.invoke(app, ["ingest", str(root), "--store", str(store), "--workers", "1",
                              "--export", str(tmp_path / "chunks.jsonl")])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "5 files listed" in out.output and "0 failed" in out.output
    assert (tmp_path / "chunks.jsonl").read_text().count("\n") > 5
    out = runner.invoke(app, ["query", "how to bake bread", "-k", "2", "--store", str(store)])
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[0]
    assert "cooking.md:1-3" in first and "Bread" in first
    out = runner.invoke(app, ["query", "bread", "--where", "source=" + str(root / "code.py"),
                              "--store", str(store)])  # fmt: skip
    assert out.exit_code == 0 and "code.py" in out.output and "cooking" not in out.output
    again = runner.invoke(app, ["ingest", str(root), "--store", str(store)])
    assert "0 chunked, 5 unchanged" in again.output and "0 chunks embedded" in again.output


def test_the_default_embedder_is_recorded_as_its_variant_and_a_store_keeps_its_own(
    tmp_path: Path,
) -> None:
    """The default (minilm:auto) is recorded as the variant it resolved to here, never as
    "auto"; re-run with the default, a store built with another variant keeps it (nothing
    re-embedded, queries still match), and naming another variant re-embeds everything."""
    from fissure.embed.load import AUTO, resolve
    from fissure.store.open import built_with

    root = write_corpus(tmp_path / "corpus", n=1)
    fresh, exact = tmp_path / "fresh", tmp_path / "exact"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = runner.invoke(app, ["ingest", str(root), "--store", str(fresh), "--workers", "1"])
    assert out.exit_code == 0, out.output
    assert built_with(fresh) == resolve(AUTO) != AUTO
    out = runner.invoke(app, ["ingest", str(root), "--store", str(exact), "--workers", "1",
                              "--embedder", "minilm"])  # fmt: skip
    assert out.exit_code == 0 and built_with(exact) == "minilm", out.output
    again = runner.invoke(app, ["ingest", str(root), "--store", str(exact)])
    assert "0 chunks embedded" in again.output and built_with(exact) == "minilm", again.output
    out = runner.invoke(app, ["query", "a question", "-k", "1", "--store", str(exact), "--json"])
    assert out.exit_code == 0, out.output
    switched = runner.invoke(app, ["ingest", str(root), "--store", str(exact),
                                   "--embedder", "minilm:onnx-int8"])  # fmt: skip
    assert switched.exit_code == 0 and "0 chunks embedded" not in switched.output
    assert built_with(exact) == "minilm:onnx-int8"


def test_commands_on_a_postgres_store(tmp_path: Path, pg_dsn: str, pg_namespace: str) -> None:
    pytest.importorskip("psycopg")
    root = write_corpus(tmp_path / "corpus", n=2)
    (root / "cooking.md").write_text("# Bread\n\nKnead the dough, let it rise, then bake it.\n")
    (root / "noise.txt").write_bytes(bytes(range(256)) * 4)
    import psycopg

    # The CLI uses the default namespace: this test gets a database of its own.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {pg_namespace}")
    dsn = pg_dsn.rsplit("/", 1)[0] + "/" + pg_namespace
    out = runner.invoke(app, ["status", "--store", dsn])
    assert out.exit_code == 2 and "no store" in out.output and "Traceback" not in out.output
    out = runner.invoke(app, ["ingest", str(root), "--store", dsn, "--workers", "1",
                              "--embedder", "hashing", "--no-progress"])  # fmt: skip
    assert out.exit_code == 1, out.output  # done, but one document is a dead letter
    assert "6 files listed" in out.output and "1 failed" in out.output
    out = runner.invoke(app, ["query", "knead the dough and bake", "-k", "1", "--store", dsn])
    assert out.exit_code == 0 and "cooking.md:1-3" in out.output, out.output
    out = runner.invoke(app, ["status", "--store", dsn])
    assert out.exit_code == 0 and "5 documents" in out.output and "1 failed" in out.output
    assert "postgresql://postgres@127.0.0.1" in out.output
    out = runner.invoke(app, ["dlq", "list", "--store", dsn])
    assert out.exit_code == 0 and "noise.txt\tparse\tInputError" in out.output
    out = runner.invoke(app, ["dlq", "clear", "--store", dsn])
    assert out.exit_code == 0 and "cleared 1" in out.output
    bad = "postgresql://nobody@127.0.0.1:1/none"
    out = runner.invoke(app, ["status", "--store", bad])
    assert out.exit_code == 2 and "cannot connect" in out.output and "Traceback" not in out.output
