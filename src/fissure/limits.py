"""What one document may cost: memory, time, and how far its content may expand.

fissure reads untrusted files, so every document runs under bounds that end it with a clear
:class:`~fissure.errors.LimitError` (or, for structure, a recorded fallback), never with a
machine out of memory or a run that hangs:

- :class:`Limits`, the bounds a run chooses: memory per document (an OS cap,
  ``RLIMIT_AS``), time (a base that means "hung", plus an allowance per MB so that big is
  not mistaken for hung) and how far compressed content may inflate. ``fissure chunk`` and
  ``fissure ingest`` take them as flags (``--memory-mb``, ``--timeout``,
  ``--timeout-per-mb``, ``--max-inflate-mb``); a :class:`~fissure.Chunker` takes
  ``limits=``. Worker processes enforce the time limit; in-process (the library) the
  memory cap and the inflate limit apply, and parsing is bounded in work (see below).
- Work bounds inside parsers, the constants below: nesting depth, blocks per document,
  breadcrumb length. Past one a parser keeps coarser structure and says so in
  ``Document.metadata["fallback"]``; the text itself is never cut.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType

from fissure.errors import ConfigError, LimitError

resource: ModuleType | None
try:
    import resource
except ImportError:  # not POSIX: no address-space cap
    resource = None

MIB = 1 << 20
DEFAULT_INFLATE_MB = 256

# Compressed content (zip members, PDF streams) inflating more than this many times its
# stored size, once past RATIO_FLOOR bytes, is a bomb: real XML and page content
# compress 3 to 30 times. (Limits.max_ratio grows with max_inflate_mb.)
MAX_RATIO = 100
RATIO_FLOOR = 4 * MIB
# Members of one archive (a DOCX has a few dozen).
MAX_ENTRIES = 10_000
# Structural blocks one parser builds for one document. Each costs a few hundred bytes
# when parsed and again when packed; past this, the rest of the text is split by its
# paragraphs and lines instead (millions of one-line CSV records or JSON members).
MAX_BLOCKS = 100_000
# Line-based parsers past these many lines (markdown-it keeps up to 2 KB of tokens per
# line, nbformat a few KB per cell) fall back to plain text.
MAX_LINES = 1_000_000
MAX_MARKDOWN_LINES = 100_000
MAX_CELLS = 20_000
# HTML with more tags than this is read as text without its markup (lexbor and the walk
# keep a few hundred bytes per element).
MAX_HTML_TAGS = 1_000_000
# Element nesting kept as structure in HTML (browsers stop nesting at 512 as well);
# deeper tags are dropped before the tree is built, their text kept.
MAX_HTML_DEPTH = 512
# Syntax trees grow to 60-140 bytes per character of Python source: past this size a file
# goes to tree-sitter, and past MAX_TREE_SITTER_BYTES to plain text.
MAX_AST_CHARS = 4_000_000
MAX_TREE_SITTER_BYTES = 8_000_000
# Tree-sitter queries start matching only this deep (a query cursor slows to minutes on
# 80,000 nested functions); entities nest 32 deep at most anyway.
MAX_QUERY_DEPTH = 1024
# Every chunk carries its breadcrumb, so one heading is kept to this many characters and a
# breadcrumb to MAX_HEADINGS titles (the outermost and the innermost ones): a chunk's
# metadata stays a few KB whatever the document's keys or titles (a title is still whole
# in the text). Entity names likewise.
MAX_HEADING_CHARS = 200
MAX_HEADINGS = 12
MAX_ENTITY_CHARS = 500
# Block facts copied onto each chunk (an element path, a fence's language) likewise.
MAX_META_CHARS = 1000


class BlockBudget:
    """The blocks one parser may still make for a document (``MAX_BLOCKS``); ``capped``
    turns true once one was refused."""

    __slots__ = ("left", "capped")

    def __init__(self, limit: int | None = None) -> None:
        self.left = MAX_BLOCKS if limit is None else limit
        self.capped = False

    def take(self) -> bool:
        """Whether one more block may be made (it is counted)."""
        if self.left <= 0:
            self.capped = True
            return False
        self.left -= 1
        return True


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one document's parse and split.

    Attributes:
        memory_mb: Address space one document may add, MiB (``None``: no cap). In a worker
            process the cap is the worker's whole address space; in-process
            (:class:`~fissure.Chunker`) it is the growth above the process's size when the
            document starts, applied to the whole process while it runs.
        timeout: Seconds a document may take before its worker is killed as hung, plus
            ``timeout_per_mb`` for each MB of input. Semantic embedding does not count:
            it is legitimate work proportional to the text, reported as it happens.
            Enforced by worker processes (``fissure chunk``, ``fissure ingest``).
        timeout_per_mb: Extra seconds per MB of the document's bytes.
        max_inflate_mb: Bytes that compressed content (DOCX members, PDF streams) may
            inflate to, MiB per document.
    """

    memory_mb: int | None = 4096
    timeout: float = 120.0
    timeout_per_mb: float = 10.0
    max_inflate_mb: int = DEFAULT_INFLATE_MB

    def __post_init__(self) -> None:
        if self.memory_mb is not None and (
            not isinstance(self.memory_mb, int) or isinstance(self.memory_mb, bool)
            or self.memory_mb < 64
        ):  # fmt: skip
            raise ConfigError(
                f"memory_mb must be at least 64 (MiB) or None, got {self.memory_mb!r}"
            )
        if not self.timeout > 0 or not self.timeout_per_mb >= 0:
            raise ConfigError(
                f"timeout must be > 0 and timeout_per_mb >= 0, got {self.timeout!r} and "
                f"{self.timeout_per_mb!r}"
            )
        if not isinstance(self.max_inflate_mb, int) or self.max_inflate_mb < 1:
            raise ConfigError(
                f"max_inflate_mb must be a positive integer, got {self.max_inflate_mb!r}"
            )

    def seconds_for(self, size: int) -> float:
        """The time budget of a document of ``size`` bytes."""
        return self.timeout + self.timeout_per_mb * size / 1e6

    def describe_time(self, size: int) -> str:
        """The time budget of a document, spelled out with the flags that set it."""
        if not self.timeout_per_mb:
            return f"{self.timeout:g} s (--timeout)"
        return (
            f"{self.seconds_for(size):.0f} s (--timeout {self.timeout:g} + --timeout-per-mb "
            f"{self.timeout_per_mb:g} × {size / 1e6:.2f} MB)"
        )

    @property
    def inflate_bytes(self) -> int:
        """``max_inflate_mb`` in bytes."""
        return self.max_inflate_mb * MIB

    @property
    def max_ratio(self) -> float:
        """The compression ratio past which content is a bomb: ``MAX_RATIO``, growing with
        ``max_inflate_mb`` above its default (raising that is how a genuine file gets in)."""
        return MAX_RATIO * max(1.0, self.max_inflate_mb / DEFAULT_INFLATE_MB)

    def is_bomb(self, inflated: int, stored: int) -> bool:
        """Whether ``inflated`` bytes from ``stored`` is past the ratio (past RATIO_FLOOR)."""
        return inflated > RATIO_FLOOR and inflated > self.max_ratio * max(stored, 1)


NO_LIMITS = Limits(memory_mb=None)

DEFAULT_LIMITS = Limits()
_current: ContextVar[Limits | None] = ContextVar("fissure_limits", default=None)


def current() -> Limits:
    """The limits of the document being parsed (what parsers read)."""
    return _current.get() or DEFAULT_LIMITS


@contextlib.contextmanager
def using(limits: Limits) -> Iterator[Limits]:
    """Make ``limits`` the :func:`current` ones inside the block."""
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


def inflate_error(what: str, inflated: int, stored: int, *, cap: int | None = None) -> LimitError:
    """The error for compressed content past the inflate limit or the ratio."""
    ratio = inflated / max(stored, 1)
    limits = current()
    limit = cap if cap is not None else limits.inflate_bytes
    return LimitError(
        f"{what} inflates past {inflated / MIB:.0f} MiB from {stored / MIB:.2f} MiB "
        f"(ratio {ratio:.0f}); limits: {limit // MIB} MiB per document and ratio "
        f"{limits.max_ratio:.0f} past {RATIO_FLOOR // MIB} MiB. If the file is genuine, raise "
        "--max-inflate-mb (Limits(max_inflate_mb=…)); the ratio limit grows with it"
    )


def memory_error(source: str, memory_mb: int | None, *, flag: str = "--memory-mb") -> LimitError:
    """The error for a document that ran out of its memory cap."""
    return LimitError(
        f"{source}: memory limit ({memory_mb} MiB, {flag}) reached while parsing and "
        f"splitting; raise {flag} if the document is genuine"
    )


# The in-process cap is one process-wide setting: nested and concurrent guards share it.
_lock = threading.Lock()
_holders = 0
_saved: tuple[int, int] | None = None


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def memory_cap(memory_mb: int | None, source: str, *, flag: str) -> Iterator[None]:
    """Let the process grow by at most ``memory_mb`` MiB of address space inside the block.

    Linux only (``RLIMIT_AS`` and ``/proc``; elsewhere nothing is capped). A breach raises
    :class:`~fissure.errors.LimitError` naming ``flag``, after the memory the document took
    is freed. The cap is process-wide while any guarded block runs: other threads'
    allocations count against it too.
    """
    global _holders, _saved
    if not memory_mb or resource is None:
        yield
        return
    with _lock:
        if _holders == 0:
            _saved = _lower(memory_mb)
        _holders += 1
    failed = False
    try:
        yield
    except MemoryError:  # not bound to a name: its traceback (and the memory) goes here
        failed = True
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _saved is not None:
                with contextlib.suppress(ValueError, OSError):
                    resource.setrlimit(resource.RLIMIT_AS, _saved)
                _saved = None
    if failed:
        raise memory_error(source, memory_mb, flag=flag)


def _lower(memory_mb: int) -> tuple[int, int] | None:
    """Lower the soft ``RLIMIT_AS`` to now + ``memory_mb``; the old limits, to restore."""
    size = _address_space()
    if size is None or resource is None:
        return None
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = size + memory_mb * MIB
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft != resource.RLIM_INFINITY and soft <= want:
            return None  # already capped as tightly (a worker's own cap)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        return None
    return soft, hard
