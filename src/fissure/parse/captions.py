"""Table titles: the line that names a table ("Table 3: Revenue by quarter").

Formats without a caption element (Markdown, DOCX without the ``Caption`` style, PDF) name
a table in a paragraph next to it. A paragraph is taken as a table's caption when it is one
short line that starts like a caption (``Table 3``, ``Tab. 2``, ``Exhibit 4``, ``Schedule
B``) or, in Markdown, is bold as a whole (``**Revenue by quarter**``).
"""

from __future__ import annotations

import re

__all__ = ["caption_title"]

CAPTION_LIMIT = 200  # a longer paragraph is prose that happens to start with "Table 1"
_CAPTION = re.compile(
    r"(?i:table|tab\.|exhibit|schedule)(?:\s*[0-9]+(?:[.\-–][0-9]+)*|\s+(?:[IVXLC]+|[A-Z]))\b"
)
_BOLD = re.compile(r"(\*\*|__)(?P<title>[^*_\n]+)\1[:.]?")


def caption_title(text: str, *, markdown: bool = False) -> str | None:
    """The title named by a caption-like paragraph, or ``None`` when it is not one.

    Args:
        text: The paragraph's text.
        markdown: Also accept a paragraph that is bold as a whole, and strip the markup.
    """
    line = " ".join(text.split())
    if not line or len(line) > CAPTION_LIMIT or "\n" in text.strip():
        return None
    if markdown:
        bold = _BOLD.fullmatch(line)
        if bold:
            return bold.group("title").strip()
        line = line.replace("**", "").replace("__", "")
    return line if _CAPTION.match(line) else None
