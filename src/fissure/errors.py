"""fissure's errors. Every message says what went wrong and how to fix it."""

from __future__ import annotations


class FissureError(Exception):
    """Base class of every error fissure raises on purpose."""


class ConfigError(FissureError, ValueError):
    """Settings that cannot work, raised when the settings are built."""


class InputError(FissureError, ValueError):
    """A document that cannot be read as text (binary, undecodable, missing)."""


class LimitError(InputError):
    """A document went past a limit (memory, time, inflated size, nesting). The message
    names the limit and the setting or flag that raises it."""


class MissingDependencyError(FissureError, ImportError):
    """An optional dependency is not installed; the message has the exact pip line."""

    def __init__(self, package: str, extra: str | None = None, purpose: str = "") -> None:
        target = f"'fissure[{extra}]'" if extra else package
        why = f" for {purpose}" if purpose else ""
        super().__init__(f"{package} is needed{why}: pip install {target}")
