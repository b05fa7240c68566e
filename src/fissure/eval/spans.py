"""Half-open character spans ``(start, end)`` and the set arithmetic the metrics need."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fissure.spans import Span


def merge(spans: Iterable[Span]) -> list[Span]:
    """The union of ``spans`` as sorted, disjoint spans; empty spans are dropped.

    Spans that merely touch (``a.end == b.start``) are joined, which leaves every size the same.
    """
    out: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def size(spans: Iterable[Span]) -> int:
    """Number of characters covered by the union of ``spans``."""
    return sum(end - start for start, end in merge(spans))


def total_length(spans: Iterable[Span]) -> int:
    """Sum of span lengths, counting characters covered twice twice."""
    return sum(end - start for start, end in spans)


def intersection_size(a: Iterable[Span], b: Iterable[Span]) -> int:
    """Number of characters in both ``union(a)`` and ``union(b)``."""
    ma, mb = merge(a), merge(b)
    i = j = n = 0
    while i < len(ma) and j < len(mb):
        lo = max(ma[i][0], mb[j][0])
        hi = min(ma[i][1], mb[j][1])
        if hi > lo:
            n += hi - lo
        if ma[i][1] <= mb[j][1]:
            i += 1
        else:
            j += 1
    return n


def overlaps(a: Span, b: Span) -> bool:
    """Whether ``a`` and ``b`` share at least one character."""
    return max(a[0], b[0]) < min(a[1], b[1])


def touches(a: Span, b: Span) -> bool:
    """Whether ``a`` and ``b`` overlap or are adjacent (``a.end == b.start`` counts)."""
    return max(a[0], b[0]) <= min(a[1], b[1])


def overlaps_any(span: Span, others: Sequence[Span]) -> bool:
    """Whether ``span`` shares a character with any of ``others``."""
    return any(overlaps(span, o) for o in others)
