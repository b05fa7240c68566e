"""Where documents come from."""

from fissure.source.files import Found, iter_files

__all__ = ["Found", "iter_files"]
