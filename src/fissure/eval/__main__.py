"""``python -m fissure.eval DATASET -s tokentext:200:0 -s recursive:200:0 ...``."""

from __future__ import annotations

import argparse
import sys

from fissure.errors import FissureError
from fissure.eval.dataset import HALVES
from fissure.eval.run import DEFAULT_CACHE, DEFAULT_OUT, run_eval


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the evaluation, map errors to one clean exit."""
    parser = argparse.ArgumentParser(prog="python -m fissure.eval", description=__doc__)
    parser.add_argument("dataset", help="Chroma dataset folder or .jsonl question file")
    parser.add_argument("-s", "--strategy", action="append", required=True,
                        help="NAME:SIZE[:OVERLAP][+OPTION...], repeatable")  # fmt: skip
    parser.add_argument("--embedder", default="minilm",
                        help="minilm (default), minilm:bf16, static, hashing")  # fmt: skip
    parser.add_argument("-k", type=int, default=5, help="headline cut-off (default 5)")
    parser.add_argument("--budget", type=int, default=None, help="reader budget in tokens")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="report folder")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    parser.add_argument("--questions", default="all", choices=HALVES,
                        help="score all questions, or those at even / odd rows")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        run_eval(args.dataset, args.strategy, args.embedder, args.k, args.budget, args.out,
                 cache_dir=args.cache, questions=args.questions)  # fmt: skip
    except FissureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
