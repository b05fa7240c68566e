"""Peak memory of one system over one corpus, measured in a fresh process.

A process's peak RSS only grows, so systems cannot share one: each is measured in its own
``python -m bench.memory`` child. The child loads the corpus, builds and warms the splitter,
resets the kernel's high-water mark (``/proc/self/clear_refs``), chunks every document
while keeping all outputs (as the timed pass does), and reports the peak RSS above the
resident size just before chunking. This counts native allocations (Rust tokenizers) that
``tracemalloc`` cannot see. Linux only; elsewhere the figure is ``None``.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_STATUS = Path("/proc/self/status")


def peak_rss_mib(corpus: str, system: str, limit_mb: float | None, timeout: float) -> float | None:
    """Run the child for one ``system`` key on ``corpus``; the peak in MiB, or None.

    Raises:
        RuntimeError: The child failed; the message ends with its last stderr line.
    """
    cmd = [sys.executable, "-m", "bench.memory", "--corpus", corpus, "--system", system]
    if limit_mb is not None:
        cmd += ["--limit-mb", str(limit_mb)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except (subprocess.SubprocessError, OSError) as exc:
        raise RuntimeError(f"memory child for {system}: {exc}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"memory child for {system} exited {done.returncode}: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])["peak_mib"]


def _status_kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    if match is None:
        raise OSError(f"{field} missing from {_STATUS}")
    return int(match.group(1))


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # "5" resets VmHWM to the current RSS


def measure(corpus_name: str, system_key: str, limit_mb: float | None) -> float | None:
    """In this process: peak RSS (MiB) above baseline while chunking the whole corpus."""
    from bench import corpora
    from bench.systems import all_systems, key

    corpus = corpora.load(corpus_name, limit_mb)
    system = next(s for s in all_systems() if key(s) == system_key)
    system.make()(corpus.documents[0].text[:2000])  # lazy imports, compiled regexes
    splitter = system.make()
    gc.collect()
    try:
        _reset_peak()
        base = _status_kib("VmRSS")
    except OSError:
        return None
    outputs = [splitter(doc.text) for doc in corpus.documents]
    peak = _status_kib("VmHWM")
    del outputs
    return round((peak - base) / 1024, 1)


def main(argv: list[str] | None = None) -> None:
    """Child entry point: print ``{"peak_mib": …}`` as the last line."""
    from bench import environment

    environment.prepare()
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--system", required=True, help="a system key such as tokens:semchunk")
    parser.add_argument("--limit-mb", type=float, default=None)
    args = parser.parse_args(argv)
    print(json.dumps({"peak_mib": measure(args.corpus, args.system, args.limit_mb)}))


if __name__ == "__main__":
    main()
