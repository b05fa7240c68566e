"""The one switch between fissure's compiled twins and their pure Python code.

The hot loops have Cython twins (``*.pyx``, built by ``setup.py`` when a C compiler is
there) that give exactly the pure Python results, only faster. Every module that can use one
asks :func:`twin` for it, so one environment variable chooses for all of them:
``FISSURE_PURE_PYTHON=1`` runs the pure Python code everywhere, which is how the tests check
that both paths make the same chunks. The switch is read when a module first asks, that is
when fissure is imported; a twin that was not built is pure Python too, as before.

>>> from fissure._compiled import reasons, twin
>>> split = twin("fissure.split._split")  # the compiled packer, or None
>>> (split is None) == (reasons()["fissure.split._split"] != "compiled")
True
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

PURE_ENV = "FISSURE_PURE_PYTHON"

# Every compiled twin, in setup.py's order (tests check that this list matches setup.py).
TWINS = (
    "fissure.size._parts",
    "fissure.size._pieces",
    "fissure.split._split",
    "fissure._chunks",
    "fissure.parse._mdwalk",
    "fissure.parse._pdfwords",
)

_OFF = frozenset({"", "0", "false", "no", "off"})
_reasons: dict[str, str] = {}


def pure_python() -> bool:
    """Whether ``FISSURE_PURE_PYTHON`` asks for the pure Python code (any value but
    empty, ``0``, ``false``, ``no`` or ``off``)."""
    return os.environ.get(PURE_ENV, "").strip().lower() not in _OFF


def twin(name: str) -> ModuleType | None:
    """The compiled module ``name``, or ``None`` where the pure Python code must run.

    ``None`` when ``FISSURE_PURE_PYTHON`` is set or the module was not built (or does not
    load); :func:`reasons` then says which.

    Args:
        name: Dotted name of one of :data:`TWINS`.

    Raises:
        ValueError: ``name`` is not a compiled twin (a typo at a call site).
    """
    if name not in TWINS:
        raise ValueError(f"{name!r} is not one of fissure's compiled twins {TWINS}")
    if pure_python():
        _reasons[name] = f"{PURE_ENV} is set"
        return None
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # built without a C compiler, or a stale build
        _reasons[name] = f"not built ({exc}); `pip install -e .` builds it where a C compiler is"
        return None
    _reasons[name] = "compiled"
    return module


def reasons() -> dict[str, str]:
    """For each twin asked for so far: ``"compiled"``, or why the pure Python code runs."""
    return dict(_reasons)
