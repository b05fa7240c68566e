from collections.abc import Callable
from typing import Any

class CharPacker:
    def __init__(
        self,
        text: str,
        seps: list[str],
        cuts: list[Any],
        start: Any,
        char: Any,
        budget: int,
        piece: Callable[..., Any],
    ) -> None: ...
    def run(self) -> list[Any]: ...

def paragraph_cuts(text: str, start: int, end: int) -> list[int]: ...
def trim(text: str, start: int, end: int) -> tuple[int, int]: ...
