#!/usr/bin/env python
"""A small path helper, used as a parser fixture.

It has a module docstring, imports, a decorated class with methods, a nested
function, comments that belong to definitions, and module-level code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

SEPARATOR = "/"  # the only separator this toy understands
ROOT = SEPARATOR


# Paths are immutable value objects.
# Two comment lines directly above belong to the class.
@dataclass(frozen=True)
class Path:
    """A POSIX-like path made of parts."""

    parts: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, text: str) -> Path:
        """Split ``text`` on the separator."""
        return cls(tuple(p for p in text.split(SEPARATOR) if p))

    # Resolution collapses "." and ".." without touching the disk.
    def resolve(self) -> Path:
        """Return the normalised path."""

        def step(stack: list[str], part: str) -> list[str]:
            if part == "..":
                return stack[:-1]
            if part == ".":
                return stack
            return [*stack, part]

        stack: list[str] = []
        for part in self.parts:
            stack = step(stack, part)
        return Path(tuple(stack))

    def __str__(self) -> str:
        return ROOT + SEPARATOR.join(self.parts)

    class Error(ValueError):
        """Raised for paths that cannot be resolved."""


async def exists(path: Path) -> bool:
    """Whether the path exists on this machine (naïve: uses os.path)."""
    return os.path.exists(str(path))


def _main() -> None:
    print(Path.parse("/usr/./lib/../bin").resolve())


if __name__ == "__main__":
    _main()
