"""Fuzzing every parser with hypothesis: real files of each format, mutated, run in a worker.

:func:`inputs` is a hypothesis strategy of ``(name, bytes)``: a seed file of the format
(``tests/corpus`` and ``samples``), put through up to eight mutations: byte flips,
insertions of the format's own tokens (``<div>``, ``{"k":``, ``stream``, a quote, a BOM …),
deletions, truncation, a slice repeated hundreds of times (deep nesting, long runs) and
splices of two seeds. DOCX seeds are mutated inside their zip (one XML member), so the
parser gets past the container.

:class:`Oracle` runs each input through the real path, detect → parse → split, in a
:class:`~fissure.ingest.workers.WorkerPool` worker, so that a hang is a timeout and a
crash is a dead worker rather than a dead fuzzer, and sorts what comes back:

- ``ok`` (chunks, possibly after a recorded fallback) and ``refused`` (a clear
  :class:`~fissure.errors.FissureError`: ``InputError``, ``LimitError``) are fine;
- ``uncaught`` (any other exception), ``hang`` (the per-document timeout) and ``crash`` (the
  worker died) are failures, as is ``masked``: a fallback whose reason is a programming
  error of the parser (``IndexError``, ``KeyError``, ``TypeError`` …) rather than "this is
  not valid X". Failing inputs are kept under ``tests/corpus/fuzz/`` by :func:`keep`.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from fissure.config import ChunkSettings
from fissure.ingest.workers import Outcome, Task, WorkerPool

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
REGRESSIONS = CORPUS / "fuzz"

# One entry per parser of fissure/parse/registry.py: the seed files, and tokens worth
# inserting (its syntax, and what has hurt parsers before).
FORMATS: dict[str, tuple[tuple[str, ...], tuple[bytes, ...]]] = {
    "text": (("text/notes.txt", "../../samples/tremors.txt"), (b"\n\n", b"== T ==", b"\r", b"\t")),
    "markdown": (("markdown/guide.md", "../../samples/fault-lines.md"),
                 (b"# ", b"```", b"- ", b"> ", b"|", b"[", b"](", b"---\n", b"<div>", b"\n\n")),
    "python": (("python/pathlike.py", "../../samples/seismograph.py"),
               (b"def ", b"class ", b"(", b"[", b"'''", b"@", b"\\\n", b"# -*- coding: x -*-")),
    "rst": (("rst/manual.rst",), (b"=====\n", b".. code-block:: python\n", b"::\n\n   ", b"\n\n")),
    "json": (("data/config.json",), (b"{", b"[", b'"k":', b",", b"}", b"]", b'"\\u', b"\\")),
    "yaml": (("data/compose.yaml",), (b"- ", b": ", b"&a ", b"*a", b"[", b"{", b"\t", b"---\n")),
    "csv": (("csv/cities.csv",), (b'"', b",", b"\n", b"\r\n", b";", b'""')),
    "notebook": (("notebook/analysis.ipynb",), (b'"cell_type": "code"', b"{", b"[", b'"', b",")),
    "html": (("html/guide.html",),
             (b"<div>", b"</div>", b"<p>", b"<ul><li>", b"<table><tr><td>", b"<!--", b"<script>",
              b"<h1>", b"<br>", b"&amp;", b"<svg><path/>")),
    "pdf": (("pdf/report.pdf",),
            (b"stream\n", b"endstream", b" 0 obj", b"<<", b">>", b"/FlateDecode", b"xref", b"(")),
    "docx": (("docx/report.docx",),
             (b"<w:p>", b"</w:p>", b"<w:r><w:t>", b"</w:t></w:r>", b'<w:pStyle w:val="Heading1"/>',
              b"<w:tbl><w:tr><w:tc>", b"<!DOCTYPE x>", b"&amp;")),
    "code": (("code/server.js", "code/lib.rs", "code/server.go", "code/buffer.c",
              "code/Repository.java", "code/shapes.ts", "code/deploy.sh", "code/account.rb"),
             (b"{", b"}", b"(", b"function f(){", b"/*", b"//", b'"', b"`", b"\\")),
}  # fmt: skip
# Reasons in a fallback that mean "this is not valid input" (the parser said so).
_FORMAT_ERRORS = re.compile(
    r"\b(ValueError|SyntaxError|UnicodeDecodeError|UnicodeError|JSONDecodeError|YAMLError|"
    r"ScannerError|ParserError|ComposerError|ConstructorError|ReaderError|NBFormatError|"
    r"ValidationError|NotJSONError|XMLSyntaxError|RecursionError|InputError|LimitError|"
    r"IndentationError|TabError|OverflowError)\b"
)
_FAILURES = ("uncaught", "hang", "crash", "masked")


def seeds(fmt: str) -> list[tuple[str, bytes]]:
    """The seed files of a format: ``(name, bytes)``."""
    return [(Path(p).name, (CORPUS / p).resolve().read_bytes()) for p in FORMATS[fmt][0]]


@st.composite
def _mutated(draw: st.DrawFn, data: bytes, tokens: tuple[bytes, ...], others: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(("flip", "token", "delete", "truncate", "repeat", "splice")))
        at = draw(st.integers(0, len(out)))
        if op == "flip" and out:
            out[min(at, len(out) - 1)] = draw(st.integers(0, 255))
        elif op == "token":
            out[at:at] = draw(st.sampled_from(tokens)) * draw(st.sampled_from((1, 1, 2, 50)))
        elif op == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        elif op == "truncate":
            del out[at:]
        elif op == "repeat":
            piece = bytes(out[at : at + draw(st.integers(1, 24))]) or b"{"
            out[at:at] = piece * draw(st.sampled_from((2, 10, 200, 2000)))
        else:
            start = draw(st.integers(0, len(others)))
            out[at:at] = others[start : start + draw(st.integers(1, 400))]
        if len(out) > 400_000:
            del out[400_000:]
    return bytes(out)


def _in_zip(docx: bytes, mutate: Callable[[bytes], bytes], member: str) -> bytes:
    """The DOCX with one member replaced by ``mutate(member bytes)``."""
    source = zipfile.ZipFile(io.BytesIO(docx))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info.filename)
            out.writestr(info.filename, mutate(data) if info.filename == member else data)
    return buffer.getvalue()


def inputs(fmt: str) -> st.SearchStrategy[tuple[str, bytes]]:
    """Mutated real files of ``fmt``: ``(file name, bytes)``."""
    files = seeds(fmt)
    tokens = FORMATS[fmt][1]
    others = b"".join(data for _, data in files)
    if fmt == "docx":
        name, docx = files[0]
        members = [n for n in zipfile.ZipFile(io.BytesIO(docx)).namelist() if n.endswith(".xml")]

        @st.composite
        def inner(draw: st.DrawFn) -> tuple[str, bytes]:
            member = draw(st.sampled_from(members))
            original = zipfile.ZipFile(io.BytesIO(docx)).read(member)
            changed = draw(_mutated(original, tokens, original))
            whole = _in_zip(docx, lambda _: changed, member)
            if draw(st.integers(0, 9)) == 0:  # now and then, damage the container too
                whole = draw(_mutated(whole, (b"PK\x03\x04", b"\x00" * 8), whole))
            return name, whole

        return inner()
    return st.sampled_from(files).flatmap(
        lambda seed: _mutated(seed[1], tokens, others).map(lambda data: (seed[0], data))
    )


@dataclass
class Verdict:
    """How one input came out: ``kind`` (see the module docstring) and the reason."""

    kind: str
    reason: str = ""

    @property
    def failed(self) -> bool:
        """Whether this input found a bug."""
        return self.kind in _FAILURES


def verdict(outcome: Outcome) -> Verdict:
    """Sort a worker's outcome."""
    if not outcome.failed:
        reason = outcome.fallback or ""
        if reason and "failed (" in reason and not _FORMAT_ERRORS.search(reason):
            return Verdict("masked", reason)
        return Verdict("ok", reason)
    why = f"{outcome.error_type}: {outcome.message}"
    if outcome.error_type == "Timeout":
        return Verdict("hang", why)
    if outcome.error_type == "WorkerDied":
        return Verdict("crash", why)
    if outcome.error_type in ("InputError", "LimitError", "ConfigError", "MissingDependencyError"):
        return Verdict("refused", why)
    return Verdict("uncaught", f"{why}\n{outcome.traceback}")


@dataclass
class Oracle:
    """Runs inputs through a worker (detect → parse → split) and sorts the outcomes.

    Args:
        timeout: Seconds an input may take (they are at most 400 KB) before it is a hang.
        memory_mb: The worker's memory cap.
    """

    timeout: float = 20.0
    memory_mb: int = 2048
    counts: dict[str, int] = field(default_factory=dict)
    pool: WorkerPool | None = None

    def __enter__(self) -> Oracle:
        self.pool = WorkerPool(ChunkSettings(), workers=1, timeout=self.timeout,
                               memory_mb=self.memory_mb, timeout_per_mb=0)  # fmt: skip
        self.pool.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.close()

    def check(self, name: str, data: bytes) -> Verdict:
        """The verdict on one input (counted in ``counts``)."""
        assert self.pool is not None, "use the oracle as a context manager"
        outcome = next(iter(self.pool.run([Task(name, data)])))
        found = verdict(outcome)
        self.counts[found.kind] = self.counts.get(found.kind, 0) + 1
        return found


def keep(name: str, data: bytes, found: Verdict, folder: Path = REGRESSIONS) -> Path:
    """Save a failing input as a regression file (named by its hash, with its extension)."""
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(data).hexdigest()[:12]
    path = folder / f"{found.kind}-{digest}-{name}"
    path.write_bytes(data)
    path.with_name(path.name + ".why").write_text(found.reason[:4000] + "\n", encoding="utf-8")
    return path
