"""A real multi-node Ray cluster on this machine, inside a network namespace with only
loopback, for the Ray engine's tests and ``bench/scale.py``.

Ray listens on every interface and registers the machine's address by default; inside a
namespace whose only interface is ``lo`` there is nothing else to listen on or talk to.
:func:`reexec_in_loopback_namespace` re-runs the calling script there (``unshare --net``, as
root, or with ``--map-root-user`` otherwise); :class:`LocalCluster` starts ``ray start
--head`` and more ``ray start --address`` nodes (one CPU each by default), kills one node
the way a machine dies (SIGKILL to its raylet and everything under it), and stops
everything it started (every process in this namespace but the caller's own line).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARK = "FISSURE_LOOPBACK_NETNS"
HEAD_PORT = 6379
_BASE_NODE_PORT = 6400


def reexec_in_loopback_namespace(argv: list[str]) -> None:
    """Re-run ``python argv…`` inside a fresh network namespace (only ``lo``, brought up),
    unless this process already runs in one; returns only inside it.

    Raises:
        SystemExit: With the child's exit code, in the outer process.
    """
    if os.environ.get(MARK) == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return
    unshare = ["unshare", "--net"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    env = {**os.environ, MARK: "1", "PYTHONPATH": pythonpath(), "RAY_USAGE_STATS_ENABLED": "0",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
    done = subprocess.run([*unshare, "--", sys.executable, *argv], env=env, cwd=ROOT)
    raise SystemExit(done.returncode)


def run_scenario(module: str, out: Path, timeout: float) -> dict[str, Any]:
    """Run ``python -m module OUT`` (a script that re-executes itself in a loopback-only
    namespace) and return the JSON it wrote; skips the calling test where Ray or a
    network namespace is not to be had."""
    import pytest

    pytest.importorskip("ray", reason="pip install 'fissure[ray]'")
    if not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs unshare (util-linux) and ip (iproute2): scripts/install-scale.sh")
    probe = ["unshare", "--net"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    if subprocess.run([*probe, "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here (unshare --net refused)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    command = [sys.executable, "-m", module, str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stderr[-4000:]
    return dict(json.loads(out.read_text()))


def pythonpath() -> str:
    """The repository and its sources first, for the nodes' worker processes too."""
    parts = [str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)


def network_report() -> dict[str, list[str]]:
    """The namespace's interfaces and every TCP/UDP socket's local and peer address."""
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in links.splitlines() if line]
    sockets = subprocess.run(["ss", "-tunaH"], capture_output=True, text=True).stdout
    pairs = []
    for line in sockets.splitlines():
        fields = line.split()
        if len(fields) >= 6:
            pairs.append(f"{fields[0]} {fields[1]} {fields[4]} -> {fields[5]}")
    return {"interfaces": names, "sockets": pairs}


class LocalCluster:
    """Ray nodes on this machine, all in the caller's network namespace.

    Args:
        cpus: CPUs each node offers.
        object_store_mb: Each node's object store.
    """

    def __init__(self, cpus: int = 1, object_store_mb: int = 300) -> None:
        self.cpus = cpus
        self.object_store = object_store_mb * 1024 * 1024
        self.temp = Path(tempfile.mkdtemp(prefix="fr-", dir="/tmp"))  # short: socket paths
        self.address = f"127.0.0.1:{HEAD_PORT}"
        self.nodes: list[int] = []  # node manager ports, the head's first
        self._ray = str(Path(sys.executable).parent / "ray")
        # Ray's token authentication, with a token of this process's own (never ~/.ray's):
        # every node and driver started from here on carries it. One per process: Ray
        # caches the token it first read.
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

    def start(self, nodes: int = 2) -> LocalCluster:
        """Start the head and ``nodes - 1`` more nodes; returns ``self``."""
        self._start(head=True)
        for _ in range(nodes - 1):
            self.add_node()
        self.wait_for(nodes)
        return self

    def add_node(self) -> int:
        """Start one more node; returns its index."""
        self._start(head=False)
        return len(self.nodes) - 1

    def _start(self, head: bool) -> None:
        port = _BASE_NODE_PORT + 10 * len(self.nodes)
        common = ["--node-ip-address=127.0.0.1", f"--num-cpus={self.cpus}", "--num-gpus=0",
                  f"--object-store-memory={self.object_store}", f"--node-manager-port={port}",
                  f"--object-manager-port={port + 1}", "--disable-usage-stats"]  # fmt: skip
        if head:
            args = ["--head", f"--port={HEAD_PORT}", "--include-dashboard=false",
                    f"--temp-dir={self.temp}", *common]  # fmt: skip
        else:
            args = [f"--address={self.address}", *common]
        env = {**os.environ, "PYTHONPATH": pythonpath(), "RAY_USAGE_STATS_ENABLED": "0"}
        done = subprocess.run([self._ray, "start", *args], env=env, cwd=ROOT, text=True,
                              capture_output=True, timeout=180)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"ray start failed: {done.stderr[-2000:]}")
        self.nodes.append(port)

    def wait_for(self, nodes: int, timeout: float = 120) -> None:
        """Wait until ``nodes`` nodes are alive."""
        deadline = time.monotonic() + timeout
        code = (
            f"import ray, json; ray.init(address={self.address!r}, log_to_driver=False); "
            "print(json.dumps(sum(n['Alive'] for n in ray.nodes())))"
        )
        env = {**os.environ, "PYTHONPATH": pythonpath()}
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=env, timeout=120)  # fmt: skip
            lines = done.stdout.strip().splitlines()
            if done.returncode == 0 and lines and json.loads(lines[-1]) >= nodes:
                return
            time.sleep(1)
        raise TimeoutError(f"{nodes} Ray nodes were not alive after {timeout:g} s")

    def kill_node(self, index: int) -> int:
        """SIGKILL node ``index``'s raylet and every process under it, as if the machine
        died; returns how many processes were killed."""
        import psutil

        port = f"--node_manager_port={self.nodes[index]}"
        raylets = [p for p in psutil.process_iter(["cmdline"])
                   if p.info["cmdline"] and port in p.info["cmdline"]]  # fmt: skip
        victims = [c for r in raylets for c in r.children(recursive=True)] + raylets
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)
        return len(victims)

    def stop(self) -> None:
        """Kill every process in this network namespace except this one and its parents
        (everything the cluster started, and nothing outside the namespace)."""
        import psutil

        if network_report()["interfaces"] != ["lo"]:  # never sweep a shared namespace
            raise RuntimeError("not inside a loopback-only network namespace: nothing stopped")
        mine = os.readlink("/proc/self/ns/net")
        keep = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
        for process in psutil.process_iter():
            try:
                if process.pid in keep or os.readlink(f"/proc/{process.pid}/ns/net") != mine:
                    continue
                process.send_signal(signal.SIGKILL)
            except (OSError, psutil.Error):
                continue
        shutil.rmtree(self.temp, ignore_errors=True)
