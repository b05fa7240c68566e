from collections.abc import Callable
from typing import Any

def build_plain(
    cls: type,
    fields: tuple[str, ...],
    text: str,
    spans: list[tuple[int, int]],
    pieces: list[Any],
    lines: list[tuple[int, int]],
    doc_id: str,
    strategy: str,
    source: str | None,
    name: str | None,
    fallback: Any,
    count: Callable[[int, int], int],
) -> list[Any]: ...
