from collections.abc import Callable
from typing import Any

class CharPacker:
    def __init__(
        self, text: str, seps: list[str], names: list[str], budget: int, piece: Callable[..., Any]
    ) -> None: ...
    def run(self) -> list[Any]: ...

def paragraph_cuts(text: str, start: int, end: int) -> list[int]: ...
