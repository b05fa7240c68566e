"""Progress bars on stderr (rich), or nothing at all when they are off."""

from __future__ import annotations

from typing import Any


class Progress:
    """Two bars: documents chunked (out of the work planned) and chunks stored.

    Args:
        enabled: Draw the bars; when false every method does nothing.
        total: Documents planned.
    """

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled and total > 0
        self.total = total
        self._bars: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as Bars

            self._bars = Bars(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._chunk = self._bars.add_task("chunked", total=self.total)
            self._store = self._bars.add_task("stored", total=None)
            self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bars is not None:
            self._bars.stop()

    def chunked(self, source: str) -> None:
        """One more document chunked (or failed)."""
        if self._bars is not None:
            self._bars.advance(self._chunk)

    def stored(self, n: int) -> None:
        """``n`` more chunks embedded and stored (called from the writer thread)."""
        if self._bars is not None:
            self._bars.advance(self._store, n)
