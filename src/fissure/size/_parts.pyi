from fissure.size.parts import Counter, Measured, Within

def measure(
    text: str, bounds: list[int], cap: int, count: Counter, within: Within, fine: bool
) -> Measured | None: ...
