"""The advice's figures are the committed measurements, quoted, not remembered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fissure.plan.evidence import ALL, Evidence

ROOT = Path(__file__).resolve().parents[2]
# A number standing alone (not in a name such as all-MiniLM-L6-v2 or recall@5).
NUMBER = re.compile(r"(?<![\w.@-])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")


@pytest.mark.parametrize("evidence", ALL, ids=lambda e: e.figure[:40])
def test_each_figure_is_quoted_from_its_result_page(evidence: Evidence) -> None:
    page = (ROOT / evidence.source).read_text("utf-8")
    for quote in evidence.quotes:
        assert quote in page, f"{evidence.source} no longer says {quote!r}"
    found = (re.findall(r"\d[\d,]*(?:\.\d+)?", q) for q in evidence.quotes)
    quoted = {n.replace(",", "") for numbers in found for n in numbers}
    for number in NUMBER.findall(evidence.figure):
        assert number.replace(",", "") in quoted, f"{number} in {evidence.figure!r} is not quoted"
