"""Where one system spends its time: cProfile over one pass of a corpus.

Usage::

    python -m bench.profile "tokens:fissure structural" --corpus stdlib --limit-mb 2
    python -m bench.profile "chars:fissure recursive" --sort cumulative --top 40

System keys are ``group:name`` as listed by ``--list``. Profiling slows Python code far more
than native code, so read the shares, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats

from bench import corpora, environment


def profile(system_key: str, corpus_name: str, limit_mb: float | None, sort: str, top: int) -> str:
    """The pstats report of one pass of ``system_key`` over the corpus."""
    from bench.systems import all_systems, key

    systems = {key(s): s for s in all_systems()}
    if system_key not in systems:
        raise SystemExit(f"unknown system {system_key!r}; use one of: {', '.join(systems)}")
    corpus = corpora.load(corpus_name, limit_mb)
    system = systems[system_key]
    system.make()(corpus.documents[0].text[:2000])
    splitter = system.make()
    profiler = cProfile.Profile()
    profiler.enable()
    for doc in corpus.documents:
        splitter(doc.text)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(sort).print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    """Print the profile of one system."""
    environment.prepare()
    parser = argparse.ArgumentParser(
        prog="python -m bench.profile",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("system", nargs="?", help="a system key, e.g. 'tokens:fissure fixed'")
    parser.add_argument("--list", action="store_true", help="list the system keys")
    parser.add_argument("--corpus", default="stdlib", choices=corpora.NAMES)
    parser.add_argument("--limit-mb", type=float, default=2.0)
    parser.add_argument("--sort", default="tottime", help="a pstats sort key")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if args.list or not args.system:
        from bench.systems import all_systems, key

        print("\n".join(key(s) for s in all_systems()))
        return
    print(profile(args.system, args.corpus, args.limit_mb, args.sort, args.top))


if __name__ == "__main__":
    main()
