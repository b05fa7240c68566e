"""Bytes → what the document is (:func:`detect`) and its text (:func:`decode`)."""

from __future__ import annotations

from fissure.detect.decode import decode
from fissure.detect.mimes import is_textual, normalize
from fissure.detect.sniff import detect

__all__ = ["decode", "detect", "is_textual", "normalize"]
