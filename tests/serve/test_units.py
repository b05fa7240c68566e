"""Units under the service: file names, settings, keys, the spool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fissure.errors import ConfigError
from fissure.serve.auth import Keys, new_key
from fissure.serve.jobs import check_namespace, safe_name
from fissure.serve.settings import ServiceSettings
from fissure.serve.spool import Spool, TooLarge
from tests.serve.server import ROOT, Server, free_port


@given(st.text(max_size=400))
def test_a_safe_name_is_never_a_path(raw: str) -> None:
    name = safe_name(raw)
    parts = name.split("/")
    assert name and len(name) <= 255 and not name.startswith("/")
    assert all(p not in ("", ".", "..") for p in parts)
    assert "\\" not in name and all(ch.isprintable() for ch in name)
    assert safe_name(name) == name


def test_names_keep_their_extension() -> None:
    assert safe_name("../../etc/passwd") == "etc/passwd"
    assert safe_name("C:\\Users\\me\\notes.md") == "C:/Users/me/notes.md"
    assert safe_name("a" * 300 + ".py").endswith(".py")
    assert safe_name("\x00\x1b[31m") == "[31m" and safe_name("..") == "upload"


def test_settings_round_trip_and_refuse_nonsense(tmp_path: Path) -> None:
    settings = ServiceSettings(store=tmp_path, allowed_roots=(tmp_path,), plugins=("x",))
    assert ServiceSettings.from_json(settings.to_json()) == settings
    for bad in ({"max_files": 0}, {"timeout": -1}, {"port": 70000}, {"memory_mb": 1},
                {"max_file_bytes": 10, "max_request_bytes": 5}):  # fmt: skip
        with pytest.raises(ConfigError):
            ServiceSettings(**bad)  # type: ignore[arg-type]
    assert (
        ServiceSettings(host="localhost").loopback and not ServiceSettings(host="0.0.0.0").loopback
    )
    shared = ServiceSettings(store=tmp_path, database="postgresql://u@h/db", spool=tmp_path / "s")
    assert ServiceSettings.from_json(shared.to_json()) == shared
    assert shared.spool_folder == tmp_path / "s" and settings.spool_folder == tmp_path / "spool"
    with pytest.raises(ConfigError, match="--spool"):
        ServiceSettings(database="postgresql://u@h/db")  # processes must share a spool
    with pytest.raises(ConfigError, match="postgresql://"):
        ServiceSettings(database="mysql://u@h/db", spool=tmp_path)


def test_keys_refuse_plain_keys_and_bad_scopes() -> None:
    with pytest.raises(ConfigError, match="sha256"):
        Keys.load(env='{"key": "plain", "namespace": "a"}')
    with pytest.raises(ConfigError, match="scopes"):
        Keys.load(env='{"sha256": "' + "0" * 64 + '", "scopes": ["admin"]}')
    with pytest.raises(ConfigError, match="namespace"):
        Keys.load(env='{"sha256": "' + "0" * 64 + '", "namespace": "Not Valid"}')
    key, line = new_key("k", "ns-1", ["read"])
    found = Keys.load(env=f"[{line}]").identify(key)
    assert found is not None and found.scopes == {"read"}
    assert check_namespace("a") == "a"


def test_the_spool_is_content_addressed_and_refuses_oversize(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    one, two = spool.put(b"same bytes"), spool.put(b"same bytes")
    assert one == two and spool.read(one.digest) == b"same bytes"
    assert [p.name for p in tmp_path.rglob("objects/*/*")] == [one.digest]
    incoming = spool.incoming(limit=10)
    with pytest.raises(TooLarge):
        incoming.write(b"x" * 11)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_store_of_another_embedder_width_stops_the_service(tmp_path: Path) -> None:
    with Server(tmp_path / "store", ["--embedder", "hashing"]):
        pass
    done = subprocess.run(
        [sys.executable, "-m", "fissure", "serve", "--store", str(tmp_path / "store"),
         "--embedder", "minilm", "--port", str(free_port())],
        capture_output=True, text=True, timeout=180,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin", "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "holds 256-wide vectors" in done.stderr and "use the same embedder" in done.stderr


def test_the_default_serves_a_store_with_its_own_variant_and_another_is_refused(
    tmp_path: Path,
) -> None:
    """A store built with the exact fp32 MiniLM is served with it by default (minilm:auto
    keeps a store's variant, as ingest does); naming another variant of the same width
    stops the service with the reason instead of querying fp32 vectors with int8 ones."""
    from fissure.embed.minilm import MINILM_ID

    store = tmp_path / "store"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Bread\n\nKnead the dough, then bake it.\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "fissure", "ingest", str(tmp_path / "docs"), "--store", str(store),
         "--embedder", "minilm", "--workers", "1", "--no-progress"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run(
        [sys.executable, "-m", "fissure", "serve", "--store", str(store),
         "--embedder", "minilm:onnx-int8", "--port", str(free_port())],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"was built with {MINILM_ID}" in done.stderr, done.stderr[-2000:]
    assert "--embedder minilm," in done.stderr, done.stderr[-2000:]
    with Server(store, ["--embedder=minilm:auto"]):
        engine = json.loads((store / "engine.json").read_text("utf-8"))
    assert engine["model"] == MINILM_ID


def test_an_unreachable_database_is_one_clear_error() -> None:
    pytest.importorskip("psycopg_pool")
    from fissure.errors import StoreError
    from fissure.serve.pg_queue import PostgresQueue

    with pytest.raises(StoreError, match="cannot connect to .*is the server running") as caught:
        PostgresQueue("postgresql://nobody:secret@127.0.0.1:1/none")
    assert "secret" not in str(caught.value)  # the password never reaches a message
