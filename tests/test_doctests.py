"""The examples in the docstrings of fissure's modules run, and give what they show."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_names() -> list[str]:
    names = []
    for path in sorted((SRC / "fissure").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def _tests(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # a module of an extra that is not installed
        pytest.skip(f"{name}: {exc}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, name) if t.examples and t.name.startswith(name)]


WITH_EXAMPLES = [
    "fissure.chunker",
    "fissure.config",
    "fissure.settings.model",
    "fissure.settings.layers",
]


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _tests(name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed (above)"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_public_names_have_examples(name: str) -> None:
    # The suite would pass vacuously if the finder found nothing: these modules have some.
    module = importlib.import_module(name)  # no skip: these need no extra
    found = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    assert sum(len(t.examples) for t in found) >= 1
