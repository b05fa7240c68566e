from collections.abc import Callable

from fissure.parse.pdf_layout import Line, Word, _Boxes

def page_lines(
    text: str,
    boxes: _Boxes,
    number: int,
    line: Callable[[list[Word], list[int], _Boxes, int], Line],
) -> list[Line]: ...
