"""``python -m fissure.eval DATASET -s SPEC -s SPEC ...``: the same command as ``fissure eval``.

One entry point: the options, their defaults and the exit status are ``fissure eval``'s.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``fissure eval`` with ``argv``; its exit status (2 for an error, one line)."""
    import typer

    from fissure.cli import app

    command = typer.main.get_command(app).commands["eval"]  # type: ignore[attr-defined]
    try:
        command.main(sys.argv[1:] if argv is None else argv, prog_name="python -m fissure.eval")
    except SystemExit as done:
        return int(done.code or 0) if not isinstance(done.code, str) else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
