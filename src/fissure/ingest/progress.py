"""Progress bars on stderr (rich), or nothing at all when they are off.

Embedding and storing is nearly all of an ingest's time, so its bar has a total, a rate
and an estimated time left from the start. The number of chunks is known only once every
document is chunked; until then the total is the chunks cut so far plus, for each document
not yet chunked, the mean of those chunked (:func:`expected_chunks`). Chunking runs well
ahead of embedding, so the estimate is exact long before the end.
"""

from __future__ import annotations

import threading
from typing import Any


def expected_chunks(chunks: int, done: int, total: int) -> int:
    """Chunks expected from ``total`` documents when ``done`` of them gave ``chunks``."""
    if done <= 0:
        return 0
    return chunks + round(chunks / done * max(0, total - done))


class Progress:
    """Two bars: documents chunked (out of the work planned) and chunks stored (out of the
    chunks expected), each with its rate and the time left.

    Args:
        enabled: Draw the bars; when false every method does nothing.
        total: Documents planned.
    """

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled and total > 0
        self.total = total
        self.documents = 0  # chunked (or failed) so far
        self.chunks = 0  # cut so far
        self.stored_chunks = 0
        self._lock = threading.Lock()  # chunked() and stored() come from two threads
        self._bars: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bars

            self._bars = Bars(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                MofNCompleteColumn(),
                _rate_column(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._chunk = self._bars.add_task("chunked", total=self.total)
            self._store = self._bars.add_task("stored", total=None)
            self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bars is not None:
            self._bars.update(self._store, total=self.stored_chunks)  # what was stored
            self._bars.stop()

    def chunked(self, source: str, chunks: int = 0) -> None:
        """One more document chunked (or failed), into ``chunks`` chunks."""
        with self._lock:
            self.documents += 1
            self.chunks += chunks
            expected = self._expected()
        if self._bars is not None:
            self._bars.advance(self._chunk)
            self._bars.update(self._store, total=expected)

    def stored(self, n: int) -> None:
        """``n`` more chunks embedded and stored (called from the writer thread)."""
        with self._lock:
            self.stored_chunks += n
        if self._bars is not None:
            self._bars.advance(self._store, n)

    def expected(self) -> int:
        """The chunks the stored bar counts towards now."""
        with self._lock:
            return self._expected()

    def _expected(self) -> int:
        known = expected_chunks(self.chunks, self.documents, self.total)
        return max(known, self.stored_chunks)


def _rate_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """Items per second over rich's recent window, e.g. ``41.2/s``."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.1f}/s")

    return Rate()
