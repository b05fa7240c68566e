from fissure.size.parts import Measured
from fissure.size.sizer import Counters

def measure(
    text: str, bounds: list[int], cap: int, counters: Counters, fine: bool
) -> Measured | None: ...
