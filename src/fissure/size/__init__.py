"""Sizing: how big a piece of text is, and exact span sizes of a document by lookup."""

from fissure.size.ruler import Ruler, SpanTable
from fissure.size.sizer import Counter, Sizer, as_sizer

__all__ = ["Counter", "Ruler", "SpanTable", "Sizer", "as_sizer"]
