"""Where documents come from."""

from fissure.source.files import iter_files

__all__ = ["iter_files"]
