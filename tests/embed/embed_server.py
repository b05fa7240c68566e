"""A real embedding service in its own process on a free loopback port, for the tests.

``EmbedServer`` runs ``fissure embed-serve --embedder hashing``, or with ``delay_ms`` this
module (``python -m tests.embed.embed_server``): the same app over a hashing embedder that
sleeps per batch and raises on any text holding ``explode``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from tests.processes import free_port, spawn, stop_group

ROOT = Path(__file__).resolve().parents[2]
MODEL = "hashing"


class EmbedServer:
    """The service in a subprocess; :meth:`start` waits for ``/health``.

    Args:
        log: Where its output goes.
        options: More ``embed-serve`` options.
        delay_ms: Run the slow test embedder instead, sleeping this long per batch.
        port: The port (default a free one); a restart on the same port keeps the spec.
    """

    def __init__(
        self,
        log: Path,
        options: Sequence[str] = (),
        *,
        delay_ms: float | None = None,
        port: int | None = None,
    ) -> None:
        self.log, self.options, self.delay_ms = log, list(options), delay_ms
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.spec = f"http:{self.url}/v1#{MODEL}"  # what fissure ingest --embedder takes
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """The command line."""
        where = ["--port", str(self.port), *self.options]
        if self.delay_ms is None:
            return [sys.executable, "-m", "fissure", "embed-serve", "--embedder", MODEL, *where]
        slow = ["--delay-ms", str(self.delay_ms)]
        return [sys.executable, "-m", "tests.embed.embed_server", *slow, *where]

    def start(self, timeout: float = 60.0) -> EmbedServer:
        """Start it and wait until ``/health`` answers 200.

        Raises:
            RuntimeError: It exited or was not up in time (with its log).
        """
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        self.process = spawn(self.command(), env, self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"embed-serve exited ({self.process.returncode}):\n{self.tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"embed-serve not up in {timeout:g} s:\n{self.tail()}")

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as ``{sample name{labels}: value}`` (labels as ``k=v`` pairs)."""
        text = httpx.get(self.url + "/metrics", timeout=10).text
        out = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                out[f"{s.name}{{{labels}}}" if labels else s.name] = float(s.value)
        return out

    def tail(self, n: int = 30) -> str:
        """The end of its log."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text("utf-8", "replace").splitlines()[-n:])
        return ""

    def kill(self) -> None:
        """``kill -9``: no shutdown, connections cut as they are."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(30)

    def stop(self) -> None:
        """Stop it (and anything it started)."""
        if self.process is None:
            return
        stop_group(self.process, 15)
        self.process = None

    def __enter__(self) -> EmbedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SlowHashing:
    """The hashing embedder, ``delay`` seconds slower per call; ``explode`` makes it raise."""

    def __init__(self, delay: float) -> None:
        from fissure.embed.hashing import HashingEmbedder

        self.inner, self.delay = HashingEmbedder(), delay
        self.dim, self.max_tokens, self.model_id = 256, 512, "slow-hashing-256"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("explode" in t for t in texts):
            raise ValueError("the test embedder explodes on 'explode'")
        time.sleep(self.delay)
        return self.inner.embed(texts)


def main() -> None:
    """Serve :class:`SlowHashing` as ``hashing`` on 127.0.0.1."""
    import uvicorn

    from fissure.embed.service.app import embedding_app

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=100.0)
    parser.add_argument("--max-batch", type=int, default=64)
    parser.add_argument("--max-wait-ms", type=float, default=5.0)
    parser.add_argument("--max-queue", type=int, default=1024)
    args = parser.parse_args()
    app = embedding_app(
        SlowHashing(args.delay_ms / 1000),
        max_batch=args.max_batch,
        max_wait_ms=args.max_wait_ms,
        max_queue=args.max_queue,
        model_name=MODEL,
    )
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
