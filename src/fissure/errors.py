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
    """A dependency is not installed; the message has the exact pip line.

    Args:
        package: The distribution to install, as pip names it.
        extra: The fissure extra that lists it (``pyproject.toml``); ``None`` for one of
            fissure's own dependencies (a broken install) or one no extra lists.
        purpose: What it is needed for.

    Attributes:
        command: The shell command that installs it, e.g. ``pip install 'fissure[eval]'``
            (quoted so that no shell expands the brackets).
    """

    def __init__(self, package: str, extra: str | None = None, purpose: str = "") -> None:
        self.package, self.extra = package, extra
        self.command = f"pip install 'fissure[{extra}]'" if extra else f"pip install {package}"
        why = f" for {purpose}" if purpose else ""
        super().__init__(f"{package} is needed{why}: {self.command}")


# The HTTP service's modules (the ``serve`` extra) and the distributions that provide them.
SERVE_MODULES = {
    "fastapi": "fastapi",
    "uvicorn": "uvicorn",
    "multipart": "python-multipart",
    "prometheus_client": "prometheus-client",
}


def need(modules: dict[str, str], extra: str | None, purpose: str = "") -> None:
    """Raise :class:`MissingDependencyError`, naming ``extra``, for the first module of
    ``modules`` (import name -> distribution) that cannot be found.

    The modules are found, not imported: importing one can fix a choice too early (the
    service sets ``$PROMETHEUS_MULTIPROC_DIR`` before prometheus_client is imported).
    """
    import importlib.util

    for module, package in modules.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # ValueError: sys.modules holds None for it
            found = False
        if not found:
            raise MissingDependencyError(package, extra, purpose=purpose)


class StoreError(FissureError):
    """The store's database cannot be reached or refused a write; the message says which
    server (without its password) and what it answered."""


class DiskFullError(StoreError):
    """The store's disk has no room for a write. It ends the run rather than failing each
    document in turn: nothing is recorded as failed, and the next run redoes the rest."""
