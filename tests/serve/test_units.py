"""Units under the service: file names, settings, keys, the spool."""

from __future__ import annotations

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
