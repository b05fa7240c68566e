"""Ingesting an untrusted folder: names kept losslessly in every layer, the bytes hashed
are the bytes chunked, and a store whose first run was killed still answers queries."""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.embed import load_embedder
from fissure.ingest import Options, ingest
from fissure.source.local import FolderSource
from fissure.source.names import is_text, path_bytes
from fissure.source.protocol import Item
from fissure.store import ChromaStore, Manifest
from tests.hostile import walk_cases
from tests.ingest.conftest import SETTINGS, run
from tests.ingest.helpers import HashEmbedder

runner = CliRunner()


def test_names_that_are_not_utf8_are_stored_losslessly(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_non_utf8(root)
    walk_cases.build_control_names(root)
    store = tmp_path / "store"
    export = io.StringIO()
    opts = Options(settings=SETTINGS, workers=1, timeout=20)
    summary = ingest(FolderSource(root), store, HashEmbedder(), opts, export=export)
    assert not summary.failures
    manifest = Manifest(store)
    try:
        listed = {source for source, status, _ in manifest.documents() if status == "ok"}
    finally:
        manifest.close()
    stored = {m["source"] for _, _, m in ChromaStore(store / "chroma").items()}
    exported = {json.loads(line)["source"] for line in export.getvalue().splitlines()}
    assert listed == stored == exported
    assert len(listed) == 7 and all(is_text(name) for name in listed)
    odd = sorted(n for n in listed if n.startswith("file://"))
    assert sorted(n.rsplit("/", 1)[-1] for n in odd) == ["caf%E9-menu.md", "inner.txt"]
    for name in listed:  # every stored name opens its file again, byte for byte
        with open(path_bytes(name), "rb") as f:
            assert f.read()
    again = run(root, store)
    assert again.unchanged == 7 and again.processed == 0


class _Racing(FolderSource):
    """Changes files between the listing and the read for chunking."""

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        with open(self.root / "good_one.md", "a", encoding="utf-8") as f:
            f.write("\nAppended after the listing: the keeper's cat.\n")
        os.truncate(self.root / "growing.log", 3 << 30)  # sparse: no disk
        return super().fetch(items)


def test_what_is_chunked_is_what_is_hashed_and_bounded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases._good(root)
    (root / "growing.log").write_text("a short log line\n" * 100)
    store = tmp_path / "store"
    opts = Options(settings=SETTINGS, workers=1, timeout=20)
    summary = ingest(_Racing(root, max_bytes=1_000_000), store, HashEmbedder(), opts)
    failed = {os.path.basename(f.source): f for f in summary.failures}
    assert set(failed) == {"growing.log"}
    assert failed["growing.log"].stage == "fetch"
    assert "over the 1,000,000-byte limit" in failed["growing.log"].message
    texts = [t for _, t, m in ChromaStore(store / "chroma").items()
             if m["source"].endswith("good_one.md")]  # fmt: skip
    assert any("keeper's cat" in t for t in texts)
    manifest = Manifest(store)
    try:
        known = manifest.known(f"file:{root.resolve()}")
    finally:
        manifest.close()
    now = hashlib.blake2b((root / "good_one.md").read_bytes(), digest_size=16).hexdigest()
    assert known[str(root.resolve() / "good_one.md")].digest == now  # stored under the new hash
    again = ingest(FolderSource(root, max_bytes=1_000_000), store, HashEmbedder(), opts)
    assert again.unchanged == 2  # the good files: their stored hash is their hash now


class _Killed(FolderSource):
    """Dies (as if killed) after handing over its first two documents."""

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        for n, got in enumerate(super().fetch(items)):
            if n == 2:
                raise KeyboardInterrupt
            yield got


def test_query_works_on_a_store_whose_first_run_was_killed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases._good(root)
    (root / "third.md").write_text("# Third\n\nA third document, never reached.\n")
    store = tmp_path / "store"
    opts = Options(settings=SETTINGS, workers=1, timeout=20, batch_chunks=1)
    with pytest.raises(KeyboardInterrupt):
        ingest(_Killed(root), store, load_embedder("hashing"), opts, embedder_spec="hashing")
    manifest = Manifest(store)
    try:
        assert manifest.runs() == {}  # no run record: the run never finished
    finally:
        manifest.close()
    out = runner.invoke(app, ["query", walk_cases.QUERIES["good_one.md"], "--store", str(store)])
    assert out.exit_code == 0, out.output
    assert "good_one.md" in out.output.splitlines()[0]
