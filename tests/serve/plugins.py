"""A test parser for the service: ``.slow`` files take 3 s to parse, then parse as text.

Named in ``FISSURE_PLUGINS`` so the parser processes register it.
"""

from __future__ import annotations

import time

from fissure.detect import mimes
from fissure.parse import text
from fissure.parse.registry import register
from fissure.types import Document

SLOW_MIME = "text/x-fissure-slow"
SLOW_SECONDS = 3.0


def parse_slow(data: str, *, source: str) -> Document:
    """Plain text, after a while."""
    time.sleep(SLOW_SECONDS)
    return text.parse(data, source=source)


mimes.EXTENSIONS[".slow"] = SLOW_MIME
register(SLOW_MIME, parse_slow)
