"""`pip install fissure` alone: a fresh virtual environment can ingest and query offline.

Needs the package registries (it installs fissure's dependencies into a new venv, about
3 minutes), so it is marked ``network`` and off by default; run it with
``python -m pytest -m network tests/test_install.py``. The README's "Install" section gives
the same check by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{args}: {out.stderr[-3000:]}"
    return out


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.timeout(1800)
def test_a_base_install_ingests_and_queries_offline(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    _run(*pip, "torch==2.13.0", cwd=tmp_path)  # the CPU build here (see the README)
    _run(*pip, str(ROOT), cwd=tmp_path)
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    offline = ["unshare", "--net", "--map-root-user"] if shutil.which("unshare") else []
    fissure = str(venv / "bin" / "fissure")
    try:
        _run(*offline, "true", cwd=tmp_path)
    except AssertionError:
        offline = []  # no user namespaces here: still offline at run time, just not enforced
    ingest = _run(*offline, fissure, "ingest", "samples", "--store", "S", cwd=tmp_path)
    assert "3 chunked" in ingest.stderr and "0 failed" in ingest.stderr
    query = _run(*offline, fissure, "query", "when did San Francisco shake?", "-k", "1",
                 "--store", "S", cwd=tmp_path)  # fmt: skip
    assert "tremors.txt" in query.stdout
    missing = subprocess.run([*offline, fissure, "models", "distill", "--out", "m"],
                             cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert missing.returncode == 2 and "pip install 'fissure[embed]'" in missing.stderr
