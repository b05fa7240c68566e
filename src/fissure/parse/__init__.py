"""Formats: each parser turns one format into a Document with a Block tree.

The routing table lives in :mod:`fissure.parse.registry`.
"""

from fissure.parse.registry import parse, parse_as_file, parse_text, parser_for, register

__all__ = ["parse", "parse_as_file", "parse_text", "parser_for", "register"]
