"""A tiny seismograph: detect events in a stream of ground-motion samples."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """A detected tremor: where it starts and ends, and how strong it was."""

    start: int
    end: int
    peak: float

    @property
    def magnitude(self) -> float:
        """A local magnitude estimate from the peak amplitude (in micrometres)."""
        return math.log10(max(self.peak, 1e-9)) + 3.0


class Detector:
    """Short-term / long-term average trigger, the classic seismic event detector.

    An event starts when the short-term average of the signal's energy exceeds the
    long-term average by ``on`` times, and ends when the ratio falls below ``off``.
    """

    def __init__(self, short: int = 5, long: int = 50, on: float = 3.0, off: float = 1.5):
        if not 0 < short < long:
            raise ValueError("need 0 < short < long")
        self.short, self.long, self.on, self.off = short, long, on, off

    def ratio(self, energy: list[float], i: int) -> float:
        """Short-term over long-term average energy at sample ``i``."""
        sta = sum(energy[i - self.short : i]) / self.short
        lta = sum(energy[i - self.long : i]) / self.long
        return sta / lta if lta else 0.0

    def detect(self, samples: list[float]) -> list[Event]:
        """All events in ``samples``, in order."""
        energy = [s * s for s in samples]
        events: list[Event] = []
        start = None
        for i in range(self.long, len(samples)):
            r = self.ratio(energy, i)
            if start is None and r > self.on:
                start = i
            elif start is not None and r < self.off:
                peak = max(abs(s) for s in samples[start:i])
                events.append(Event(start, i, peak))
                start = None
        return events


def synthetic(n: int = 600, at: int = 300, width: int = 40) -> list[float]:
    """Quiet noise with one burst, for trying the detector."""
    quiet = [0.01 * math.sin(i * 1.7) for i in range(n)]
    for i in range(at, min(n, at + width)):
        quiet[i] += math.sin(i * 0.9) * math.exp(-(i - at) / 15)
    return quiet
