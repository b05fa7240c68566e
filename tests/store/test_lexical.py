"""The lexical index (BM25 in SQLite FTS5) kept in step with the store, and the three modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fissure.errors import ConfigError
from fissure.store import ChromaStore
from fissure.store.fusion import Fusion, fuse, hybrid_scores
from fissure.store.lexical import FILENAME, LexicalIndex, match_expression, parts, terms
from fissure.store.open import close_store, open_store
from tests.ingest.conftest import run, write_corpus
from tests.ingest.helpers import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]


def lexical_state(store: Path, namespace: str = "default") -> tuple[dict, dict]:
    """``(lexical records, Chroma records)``, both as ``chunk_id -> (source, text)``."""
    found, manifest = open_store(store, namespace=namespace)
    manifest.close()
    try:
        chroma = {i: (m["source"], t) for i, t, m in found.items()}  # type: ignore[attr-defined]
        return found._open_lexical().records(), chroma  # type: ignore[attr-defined]
    finally:
        close_store(found)


def assert_in_step(store: Path, namespace: str = "default") -> dict:
    lexical, chroma = lexical_state(store, namespace)
    assert lexical == chroma, "the lexical index and the stored chunks differ"
    return chroma


def test_identifier_parts_and_query_words() -> None:
    assert parts("parse_args") == ["parse", "args"]
    assert parts("HTTPServerError") == ["http", "server", "error"]
    assert parts("Größe") == [] and parts("x") == []
    assert terms("call os.path.join(parse_args) now") == "parse args"
    words = match_expression("What is the parse_args of it?", "words")
    assert words == '"parse_args" OR "parse" OR "args"'
    assert match_expression("What is the parse_args of it?", "trigram") == '"parse_args"'
    assert match_expression("what is the") is None


def test_the_index_equals_the_stored_chunks_through_ingest_reingest_and_deletes(
    tmp_path: Path,
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    store = tmp_path / "store"
    run(corpus, store)
    first = assert_in_step(store)
    assert len(first) > 10
    (corpus / "doc0.md").write_text("# Changed\n\n" + "fresh_token words " * 30)
    (corpus / "doc1.md").unlink()
    run(corpus, store)
    after = assert_in_step(store)
    sources = {s for s, _ in after.values()}
    assert not any(s.endswith("doc1.md") for s in sources)
    assert any("fresh_token" in t for _, t in after.values())
    run(corpus, store)  # nothing changed: nothing moves
    assert assert_in_step(store) == after


_CRASH = """
import os, sys
from pathlib import Path
from fissure.store import exact
from tests.ingest.conftest import run
calls = [0]
original = exact.VectorFile.add
def add(self, batch):
    calls[0] += 1
    if calls[0] == int(sys.argv[3]):
        os._exit(9)  # dies after the lexical rows, before the copy and Chroma
    return original(self, batch)
exact.VectorFile.add = add
run(sys.argv[1], Path(sys.argv[2]), batch_chunks=4)
"""


@pytest.mark.parametrize("at", [1, 3])
def test_a_crash_between_the_writes_heals_on_the_next_run(tmp_path: Path, at: int) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    want = tmp_path / "want"
    run(corpus, want)
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    done = subprocess.run([sys.executable, "-c", _CRASH, str(corpus), str(store), str(at)],
                          cwd=ROOT, env=env, capture_output=True, timeout=120)  # fmt: skip
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    lexical, chroma = lexical_state(store)
    assert set(chroma) < set(lexical), "the lexical rows are written first"
    phantom = next(t for i, (_, t) in lexical.items() if i not in chroma)
    found = ChromaStore(store / "chroma")
    word = next(w for w in phantom.split() if w.startswith("word") or w.isalpha())
    hits = found.query(None, 50, mode="lexical", text=word)
    assert all(h.chunk_id in chroma for h in hits), "a row Chroma lacks came back"
    run(corpus, store)
    assert assert_in_step(store) == assert_in_step(want)


def test_namespaces_never_meet(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "one.md").write_text("# One\n\nthe zanzibar_alpha protocol lives here\n")
    (b / "two.md").write_text("# Two\n\nthe quokka_beta protocol lives there\n")
    store = tmp_path / "store"
    run(a, store, namespace="a")
    run(b, store, namespace="b")
    for ns, mine, theirs in (("a", "zanzibar_alpha", "quokka_beta"),
                             ("b", "quokka_beta", "zanzibar_alpha")):  # fmt: skip
        found, manifest = open_store(store, namespace=ns)
        manifest.close()
        assert found.query(None, 5, mode="lexical", text=theirs) == []
        got = found.query(None, 5, mode="lexical", text=mine)
        assert [mine in h.text for h in got] == [True]
        assert set(assert_in_step(store, ns)) == {h.chunk_id for h in got}


def _store(tmp_path: Path, name: str = "store", **opts: object) -> tuple[ChromaStore, HashEmbedder]:
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "ident.py").write_text(
        "def load_widget_config(path):\n    return open(path).read()\n\n\n"
        "def unrelated(x):\n    return x * 2\n"
    )
    embedder = HashEmbedder()
    run(corpus, tmp_path / name, embedder, **opts)
    return ChromaStore(tmp_path / name / "chroma"), embedder


def test_lexical_and_hybrid_hits_carry_what_dense_hits_carry(tmp_path: Path) -> None:
    store, embedder = _store(tmp_path)
    vector = embedder.embed(["load_widget_config"])[0]
    dense = store.query(vector, 3)
    lexical = store.query(None, 3, mode="lexical", text="load_widget_config")
    hybrid = store.query(vector, 3, mode="hybrid", text="load_widget_config")
    assert "load_widget_config" in lexical[0].text
    assert lexical[0].metadata["source"].endswith("ident.py")
    assert hybrid[0].chunk_id == lexical[0].chunk_id  # rank 1 lexical, some rank dense
    for hit in [*dense, *lexical, *hybrid]:
        assert set(hit.metadata) >= {"source", "start", "end", "line_start", "headings"}
        assert hit.copies >= 1
    with pytest.raises(ConfigError, match="text"):
        store.query(vector, 3, mode="hybrid")
    with pytest.raises(ConfigError, match="mode"):
        store.query(vector, 3, mode="bm25", text="x")


def test_where_filters_both_sides(tmp_path: Path) -> None:
    store, embedder = _store(tmp_path)
    source = next(m["source"] for _, _, m in store.items() if m["source"].endswith("doc2.md"))
    vector = embedder.embed(["load_widget_config"])[0]
    for mode in ("lexical", "hybrid"):
        hits = store.query(vector, 5, {"source": source}, mode=mode, text="load_widget_config")
        assert all(h.metadata["source"] == source for h in hits)
        hits = store.query(vector, 5, {"index": 0}, mode=mode, text="word2_0_1 Document")
        assert hits and all(h.metadata["index"] == 0 for h in hits)


def test_hybrid_ranking_is_deterministic(tmp_path: Path) -> None:
    store, embedder = _store(tmp_path)
    twin, _ = _store(tmp_path, "twin", batch_chunks=3)  # other batches, other write order
    question = "Part 1 word3_1_2 gamma load_widget_config"
    vector = embedder.embed([question])[0]
    runs = [s.query(vector, 8, mode="hybrid", text=question) for s in (store, store, twin)]
    keys = [[(h.chunk_id, round(h.score, 12)) for h in r] for r in runs]
    assert keys[0] == keys[1] == keys[2]
    assert [h.score for h in runs[0]] == sorted((h.score for h in runs[0]), reverse=True)


def test_fusion_is_weighted_reciprocal_rank() -> None:
    fused = fuse(np.array([2, 0]), np.array([0, 3]), Fusion(constant=60, weight=0.25), 4)
    assert fused[0] == pytest.approx(0.75 / 62 + 0.25 / 61)
    assert fused[2] == pytest.approx(0.75 / 61) and fused[3] == pytest.approx(0.25 / 62)
    assert fused[1] == 0
    every = hybrid_scores(np.array([0.5, 0.9, 0.7, -np.inf]), np.array([2, 0]),
                          np.array([0]), Fusion())  # fmt: skip
    assert every[1] < 0 < every[2] and every[3] == -np.inf  # past both lists: dense order
    with pytest.raises(ConfigError):
        Fusion(weight=1.5)


def test_an_older_store_gets_its_index_on_first_query(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    folder = store.folder
    store._open_lexical().close()
    for name in os.listdir(folder):
        if name.startswith(FILENAME):
            os.remove(folder / name)
    again = ChromaStore(folder)
    hits = again.query(None, 2, mode="lexical", text="load_widget_config")
    assert hits and "load_widget_config" in hits[0].text
    assert again.lexical().count() == again.count()


def test_the_index_refuses_another_tokenizer(tmp_path: Path) -> None:
    LexicalIndex(tmp_path / "x.sqlite3", tokenizer="words").close()
    with pytest.raises(ConfigError, match="words"):
        LexicalIndex(tmp_path / "x.sqlite3", tokenizer="trigram")
    trigram = LexicalIndex(tmp_path / "x.sqlite3", "other", tokenizer="trigram")
    trigram.add(["a"], ["s"], ["ConnectionResetError raised"])
    assert [i for i, _ in trigram.search("reset")] == ["a"]


def test_a_store_rebuilds_its_index_for_another_tokenizer(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    folder = store.folder
    for lexer in ("words", "trigram", "words"):
        again = ChromaStore(folder, lexer=lexer)
        hits = again.query(None, 1, mode="lexical", text="load_widget_config")
        assert "load_widget_config" in hits[0].text
        assert again.lexical().tokenizer == lexer
        assert again.lexical().records() == {i: (m["source"], t) for i, t, m in again.items()}
        again.lexical().close()


def test_mode_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fissure.cli import app

    runner = CliRunner()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "net.py").write_text("def retry_on_ECONNRESET(sock):\n    return sock.reopen()\n")
    (docs / "bread.md").write_text("# Bread\n\nKnead the dough and let it rise.\n")
    store = str(tmp_path / "s")
    out = runner.invoke(app, ["ingest", str(docs), "--store", store, "--embedder", "hashing",
                              "--workers", "1"])  # fmt: skip
    assert out.exit_code == 0, out.output
    for mode in ("dense", "lexical", "hybrid"):
        out = runner.invoke(app, ["query", "ECONNRESET", "--store", store, "--mode", mode,
                                  "--json", "-k", "2"])  # fmt: skip
        assert out.exit_code == 0, out.output
        answer = json.loads(out.stdout)
        assert answer["mode"] == mode and answer["hits"]
        if mode != "dense":
            assert answer["hits"][0]["source"].endswith("net.py")
    out = runner.invoke(app, ["query", "ECONNRESET", "--store", store, "--json"])
    assert json.loads(out.stdout)["mode"] == "hybrid"  # the default, chosen held out
    out = runner.invoke(app, ["query", "x", "--store", store, "--mode", "sparse"])
    assert out.exit_code == 2 and "mode must be one of" in out.output and "--mode" in out.output
    assert "--mode" in runner.invoke(app, ["query", "--help"]).output


@pytest.mark.slow
def test_lexical_finds_an_identifier_that_dense_misses_in_a_real_file(tmp_path: Path) -> None:
    """The standard library's textwrap.py, fissure's defaults, MiniLM: asked for
    ``_split_chunks``, the dense top 3 holds other methods of the same class; BM25 puts
    the method's own chunk first, and hybrid keeps it in its top 3."""
    import sysconfig

    from fissure.config import ChunkSettings
    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source

    docs = tmp_path / "docs"
    docs.mkdir()
    original = Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py"
    (docs / "textwrap.py").write_bytes(original.read_bytes())
    model = load_embedder("minilm")
    options = Options(settings=ChunkSettings(), workers=1, timeout=600, progress=False)
    ingest(open_source(str(docs)), tmp_path / "s", model, options)
    store = ChromaStore(tmp_path / "s" / "chroma")
    question = "_split_chunks"
    vector = model.embed([question])[0]

    def holds(hits: list) -> bool:
        return any("def _split_chunks(" in h.text for h in hits)

    assert not holds(store.query(vector, 3))
    assert holds(store.query(None, 1, mode="lexical", text=question))
    assert holds(store.query(vector, 3, mode="hybrid", text=question))
