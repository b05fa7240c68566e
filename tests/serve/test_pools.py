"""The engine's parsing pool is chosen in one place, from the settings; a Ray engine asked
for without Ray installed is one clear line. No cluster here (tests/serve/test_ray_service.py
has the real one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.config import ChunkSettings
from fissure.errors import ConfigError, MissingDependencyError
from fissure.ingest.workers import WorkerPool
from fissure.serve.pools import open_pool
from fissure.serve.settings import ServiceSettings
from tests.serve.server import ROOT, free_port

CHUNK = ChunkSettings(tokenizer="words", max_tokens=40)


def test_the_engine_setting_picks_the_pool_with_the_same_limits(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="pip install 'fissure[ray]'")
    from fissure.ingest.ray_pool import RayPool

    common = {"store": tmp_path, "chunk": CHUNK, "timeout": 7.0, "memory_mb": 512,
              "recycle_after": 9, "plugins": ("tests.ingest.helpers",)}  # fmt: skip
    local = open_pool(ServiceSettings(workers=3, **common))  # type: ignore[arg-type]
    assert isinstance(local, WorkerPool) and local.size == 3 and local.recycle_after == 9
    ray = open_pool(ServiceSettings(engine="ray", address="127.0.0.1:6379", workers=None,
                                    **common))  # type: ignore[arg-type]  # fmt: skip
    assert isinstance(ray, RayPool) and ray.address == "127.0.0.1:6379" and ray.workers is None
    assert ray.limits == local.limits and ray.plugins == local.plugins
    assert (ray.replaced, ray.recycled) == (0, 0)
    ray.close()  # never started: nothing to stop, no cluster joined


def test_engine_settings_are_checked_and_travel_as_json(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="engine must be one of local, ray"):
        ServiceSettings(store=tmp_path, engine="spark")
    with pytest.raises(ConfigError, match="use it with --engine ray"):
        ServiceSettings(store=tmp_path, address="127.0.0.1:6379")
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        ServiceSettings(store=tmp_path, workers=None)
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        ServiceSettings(store=tmp_path, workers=0)
    pytest.importorskip("ray", reason="pip install 'fissure[ray]'")
    ray = ServiceSettings(store=tmp_path, engine="ray", address="127.0.0.1:6379", workers=None)
    assert ServiceSettings.from_json(ray.to_json()) == ray


def test_ray_engine_without_ray_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the [ray] extra were missing
    with pytest.raises(MissingDependencyError, match=r"pip install 'fissure\[ray\]'"):
        ServiceSettings(store=tmp_path, engine="ray", workers=None)
    out = CliRunner().invoke(app, ["serve", "--store", str(tmp_path / "s"), "--engine", "ray"])
    assert out.exit_code == 2
    assert "pip install 'fissure[ray]'" in out.output and "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()  # refused before anything was made


def test_a_cluster_address_nobody_answers_is_refused_at_once(tmp_path: Path) -> None:
    from fissure.ingest.ray_parts import connect

    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConfigError, match="nothing answers at the Ray cluster address"):
        connect(None, address, ())  # refused before Ray is asked (it would retry for minutes)
    pytest.importorskip("ray", reason="pip install 'fissure[ray]'")
    # The service: its engine cannot join, so the service stops with that one line.
    command = [sys.executable, "-m", "fissure", "serve", "--store", str(tmp_path / "s"),
               "--port", str(free_port()), "--embedder", "hashing", "--engine", "ray",
               "--address", address]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: nothing answers at the Ray cluster address " + address)
