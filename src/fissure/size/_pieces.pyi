from collections.abc import Callable

import numpy as np

class Ranks:
    def __init__(self, tokens: list[bytes], skip: object = ...) -> None: ...
    def count_bytes(self, b: bytes) -> int | None: ...

class PieceCounter:
    def __init__(
        self,
        count: Callable[[str], int],
        count_till_limit: Callable[[str, int], int | None],
        ranks: Callable[[], Ranks] | None = None,
        ranks_after: int = 1024,
        max_entries: int = 1 << 18,
        encoding: str = "cl100k_base",
    ) -> None: ...
    def count(self, text: str) -> int: ...
    def count_till_limit(self, text: str, limit: int) -> int | None: ...
    def prefix(self, text: str, seams: np.ndarray) -> np.ndarray | None: ...
    def pieces(self, text: str) -> list[int] | None: ...
    @property
    def size(self) -> int: ...

MERGED_BYTES: int

class WordCounter:
    def __init__(
        self,
        count: Callable[[str], int],
        wordpiece: Callable[[str], int],
        max_entries: int = 1 << 18,
    ) -> None: ...
    def count(self, text: str) -> int: ...
    @property
    def size(self) -> int: ...
