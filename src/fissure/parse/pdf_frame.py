"""The frame a PDF page is read in: top-down points, turned so that its text stands upright.

A landscape table in a report is often drawn on a portrait page with its text running up
the page, and the page carries ``/Rotate 90`` so that a viewer shows it upright. pdfium's
boxes are in the unturned page space, where such a table's rows are columns. The page's
words, rules and size are all taken through one :class:`Frame`, turned by the angle that
makes most of the page's characters stand upright (which is the page's ``/Rotate`` where
the file is made well, and also covers a sideways table on a page without it), so that
lines, columns and tables are found as on any other page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Frame", "frame_of"]

_SAMPLE = 32  # characters whose angle is asked for (spread over the page)
_MAJORITY = 0.6  # share of the sampled characters that must agree to turn the page


@dataclass(frozen=True, slots=True)
class Frame:
    """Page space (y up, from the media box) to the reading frame (top-down points from
    the top-left corner of the page as it is read), turned clockwise by ``turn`` degrees.

    Attributes:
        left, bottom, right, top: The media box.
        turn: 0, 90, 180 or 270.
    """

    left: float
    bottom: float
    right: float
    top: float
    turn: int = 0

    @property
    def size(self) -> tuple[float, float]:
        """Width and height in the reading frame."""
        w, h = self.right - self.left, self.top - self.bottom
        return (h, w) if self.turn in (90, 270) else (w, h)

    def point(self, x: float, y: float) -> tuple[float, float]:
        """``(x, top)`` of a point of page space."""
        if self.turn == 0:
            return x - self.left, self.top - y
        if self.turn == 90:
            return y - self.bottom, x - self.left
        if self.turn == 180:
            return self.right - x, y - self.bottom
        return self.top - y, self.right - x

    def box(self, left: float, bottom: float, right: float, top: float) -> tuple[float, ...]:
        """``(x0, x1, top, bottom)`` of a box of page space."""
        if self.turn == 0:
            return left - self.left, right - self.left, self.top - top, self.top - bottom
        if self.turn == 90:
            return bottom - self.bottom, top - self.bottom, left - self.left, right - self.left
        if self.turn == 180:
            return self.right - right, self.right - left, bottom - self.bottom, top - self.bottom
        return self.top - top, self.top - bottom, self.right - right, self.right - left


def frame_of(page: Any, textpage: Any | None = None) -> Frame:
    """The frame of a ``pypdfium2`` page: turned when at least 60% of a sample of its
    characters run in one other direction (pdfium's angle, measured clockwise in page
    space: text running up the page is at 270 degrees and is read turned by 90); as the
    page is shown (its ``/Rotate``) when it has no text; unturned without ``textpage``."""
    left, bottom, right, top = (float(v) for v in page.get_mediabox())
    if textpage is None:
        return Frame(left, bottom, right, top)
    import pypdfium2.raw as pdfium_c

    count, raw, angle_of = textpage.count_chars(), textpage.raw, pdfium_c.FPDFText_GetCharAngle
    step = max(1, count // _SAMPLE)
    votes = [0, 0, 0, 0]
    for index in range(0, count, step):
        # Spaces and line breaks pdfium put in are at 0 degrees: they only make a page
        # less likely to turn, and asking which they are would double the calls.
        angle = angle_of(raw, index)
        if angle < 0:  # no angle
            continue
        votes[round(math.degrees(angle) / 90) % 4] += 1
    if not any(votes):  # no text (a scan, read by OCR on the page as shown): as shown
        return Frame(left, bottom, right, top, int(page.get_rotation()) % 360)
    quarter = max(range(4), key=votes.__getitem__)
    if quarter == 0 or votes[quarter] < _MAJORITY * sum(votes):
        return Frame(left, bottom, right, top)
    return Frame(left, bottom, right, top, (360 - 90 * quarter) % 360)
