"""``fissure key`` and ``fissure submit`` against a real server."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.serve.server import ROOT, Server

ENV = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}


def fissure(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fissure", *args], capture_output=True,
                          text=True, timeout=300, env={**ENV, **(env or {})})  # fmt: skip


def test_key_then_submit_and_follow(tmp_path: Path) -> None:
    keys = tmp_path / "keys.jsonl"
    made = fissure("key", "--namespace", "docs", "--name", "ci", "--keys-file", str(keys))
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("fsk_") and secret not in keys.read_text()
    assert stat.S_IMODE(os.stat(keys).st_mode) == 0o600
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.md").write_text("# A\n\nThe first document.\n")
    (corpus / "sub" / "b.py").write_text("def b():\n    return 2\n")
    (corpus / "stuck.hang").write_text("never parsed")
    options = ["--keys-file", str(keys), "--timeout", "2", "--max-attempts", "1"]
    with Server(tmp_path / "store", options) as server:
        done = fissure(
            "submit", str(corpus), "--server", server.url, env={"FISSURE_API_KEY": secret}
        )
        assert done.returncode == 1, done.stderr  # the hanging file failed
        lines = sorted(done.stdout.splitlines())
        assert lines[0].startswith("done    a.md  1 chunks")
        assert lines[1].startswith("done    sub/b.py  1 chunks")
        assert lines[2].startswith(
            "failed  stuck.hang  Timeout: parsing and splitting took longer than 2 s"
        )
        assert "accepted 3 documents (3 new, 0 already there)" in done.stderr
        again = fissure("submit", str(corpus / "a.md"), "--server", server.url, "--key", secret)
        assert again.returncode == 0 and "0 new, 1 already there" in again.stderr
        refused = fissure("submit", str(corpus / "a.md"), "--server", server.url, "--key", "bad")
        assert refused.returncode != 0 and "401" in refused.stderr
        assert "Traceback" not in refused.stderr
