"""``structural`` keeps units whole: fences, table rows, Python functions and methods.

A chunk may end strictly inside such a unit only when that unit alone is over budget; then
the chunk says so in ``metadata["oversize"]``, and the unit's size is checked here with the
same sizer. Units are located independently of fissure's parsers: the Markdown generator
records where it put each fence and row, and Python spans come from ``ast``. Inputs are
seeded random documents (headings, paragraphs, fences holding ``#`` lines, tables with
long cells, decorated functions and methods with docstrings of random sizes) and the
committed corpus, at budgets from tiny to large. Chunk context is checked too: the
heading path of Markdown chunks and the qualified ``entity`` of Python chunks.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass

import pytest

from fissure import Chunk, Chunker, Document
from fissure.parse import parse
from fissure.split.breaks import paged_cuts
from fissure.split.pack import ATOMIC
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer
from tests.test_corpus_snapshots import FILES

SEEDS = range(12)
BUDGETS = [("cl100k_base", 8), ("cl100k_base", 30), ("minilm", 64), ("cl100k_base", 200)]
BUDGETS += [("chars", 900), ("cl100k_base", 2000)]
_VOCABULARY = (
    "fault slip strike dip crust plate stress rupture epicentre wave seismic shear basin "
    "ridge trench magma quake shock scale record station signal noise filter window"
)
WORDS = tuple(_VOCABULARY.split())


@dataclass(frozen=True)
class Unit:
    """A span that a chunk should not end inside: ``[start, end)`` in the text."""

    kind: str
    start: int
    end: int
    name: str = ""
    lead: int | None = None  # where the unit's size is measured from, if not ``start``


def chunker_for(tokenizer: str, budget: int) -> Chunker:
    return Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))


def cuts_through(chunks: list[Chunk], units: list[Unit]) -> list[tuple[Chunk, Unit]]:
    """(chunk, innermost unit) for every chunk end strictly inside a unit."""
    found = []
    for c in chunks:
        inside = [u for u in units if u.start < c.end < u.end]
        if inside:
            found.append((c, min(inside, key=lambda u: u.end - u.start)))
    return found


def assert_units_whole(document: Document, chunker: Chunker, units: list[Unit], label: str):
    """Every cut through a unit is marked ``oversize`` and the unit really is over budget."""
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)
    budget, count = chunker.settings.budget, chunker.sizer._fn
    for c, unit in cuts_through(chunks, units):
        where = f"{label}: chunk [{c.start}:{c.end}] ends inside {unit}"
        assert c.metadata.get("oversize"), f"{where} without oversize"
        lead = unit.start if unit.lead is None else unit.lead
        size = count(document.text[lead : unit.end].strip())
        assert size > budget, f"{where} that fits ({size} <= {budget})"
    return chunks


# ----------------------------------------------------------------------------- Markdown


def words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


class MarkdownWriter:
    """A random Markdown document that remembers where its units and headings are."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.text = ""
        self.units: list[Unit] = []
        self.headings: list[tuple[int, int, str]] = []  # (offset, level, title)

    def add(self, block: str) -> int:
        if self.text:
            self.text += "\n\n"
        start = len(self.text)
        self.text += block
        return start

    def heading(self) -> None:
        level, title = self.rng.randint(1, 4), words(self.rng, 1, 4).capitalize()
        self.headings.append((self.add(f"{'#' * level} {title}"), level, title))

    def paragraph(self) -> None:
        rng = self.rng
        sentences = [words(rng, 3, 16).capitalize() + "." for _ in range(rng.randint(1, 6))]
        self.add(("\n" if rng.random() < 0.3 else " ").join(sentences))

    def fence(self) -> None:
        rng = self.rng
        body = [self._code_line() for _ in range(rng.randint(0, 30))]
        marker, inner = rng.choice([("```", "~~~"), ("~~~", "```"), ("````", "```")])
        if rng.random() < 0.3:
            body.insert(rng.randint(0, len(body)), inner)  # a shorter fence is content
        lang = rng.choice(["python", "bash", "", "text"])
        start = self.add("\n".join([marker + lang, *body, marker]))
        self.units.append(Unit("fence", start, len(self.text)))

    def _code_line(self) -> str:
        rng = self.rng
        return rng.choice(
            [
                f"# {words(rng, 1, 6)}",
                f"## {words(rng, 1, 3)}",
                f"x_{rng.randint(0, 99)} = compute({rng.randint(0, 9)})",
                "def handler(event):",
                "    return event",
                "",
                f"| {words(rng, 1, 2)} | {words(rng, 1, 2)} |",
                f"print({words(rng, 5, 40)!r})",
            ]
        )

    def table(self) -> None:
        rng = self.rng
        cols = rng.randint(2, 4)
        wide = rng.random() < 0.3

        def row() -> str:
            return "| " + " | ".join(words(rng, 1, 40 if wide else 6) for _ in range(cols)) + " |"

        header = row() + "\n" + "|" + "---|" * cols
        rows = [row() for _ in range(rng.randint(1, 8))]
        start = self.add("\n".join([header, *rows]))
        self.units.append(Unit("row", start, start + len(header)))
        pos = start + len(header) + 1
        for r in rows:
            self.units.append(Unit("row", pos, pos + len(r)))
            pos += len(r) + 1

    def bullets(self) -> None:
        self.add("\n".join(f"- {words(self.rng, 2, 12)}" for _ in range(self.rng.randint(2, 5))))

    def heading_path(self, offset: int) -> tuple[str, ...]:
        """Titles of the sections that contain ``offset``, outermost first."""
        stack: list[tuple[int, str]] = []
        for start, level, title in self.headings:
            if start > offset:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        return tuple(title for _, title in stack)


def markdown_doc(seed: int) -> MarkdownWriter:
    rng = random.Random(seed)
    doc = MarkdownWriter(rng)
    makers = [doc.heading, doc.paragraph, doc.paragraph, doc.fence, doc.table, doc.bullets]
    for _ in range(rng.randint(5, 30)):
        rng.choice(makers)()
    doc.text += "\n"
    return doc


@pytest.mark.parametrize(("tokenizer", "budget"), BUDGETS)
def test_generated_markdown_keeps_fences_and_rows(tokenizer: str, budget: int):
    chunker = chunker_for(tokenizer, budget)
    for seed in SEEDS:
        md = markdown_doc(seed)
        document = parse(md.text.encode(), f"gen-{seed}.md")
        assert document.mime == "text/markdown"
        chunks = assert_units_whole(document, chunker, md.units, f"seed {seed}")
        for c in chunks:
            assert c.headings == md.heading_path(c.start), (seed, c.start, c.text[:60])


def test_markdown_generator_makes_both_kinds_of_unit():
    docs = [markdown_doc(seed) for seed in SEEDS]
    kinds = {u.kind for d in docs for u in d.units}
    assert kinds == {"fence", "row"}
    assert sum(len(d.text) for d in docs) > 20_000


# ----------------------------------------------------------------------------- Python


class PythonWriter:
    """A random, valid Python module with decorated functions, classes and methods."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.count = 0

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line if line else "")

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def docstring(self, indent: int) -> None:
        n = self.rng.choice([0, 0, 1, 3, 12])
        if n == 1:
            self.emit(indent, f'"""{words(self.rng, 2, 10).capitalize()}."""')
        elif n:
            self.emit(indent, f'"""{words(self.rng, 2, 8).capitalize()}.')
            self.emit(0, "")
            for _ in range(n):
                self.emit(indent, words(self.rng, 3, 14))
            self.emit(indent, '"""')

    def statements(self, indent: int, n: int) -> None:
        rng = self.rng
        for _ in range(n):
            pick = rng.random()
            var = self.name("value")
            if pick < 0.5:
                self.emit(indent, f"{var} = compute({rng.randint(0, 99)}, {words(rng, 1, 3)!r})")
            elif pick < 0.65:
                self.emit(indent, f"if {var!r} in {words(rng, 1, 3).split()!r}:")
                self.emit(indent + 1, f"log({words(rng, 2, 20)!r})")
            elif pick < 0.8:
                self.emit(indent, f"for {var} in range({rng.randint(1, 9)}):")
                self.emit(indent + 1, f"# {words(rng, 2, 8)}")
                self.emit(indent + 1, f"total = total + {var}")
            elif pick < 0.9:
                self.emit(indent, f"message = {words(rng, 20, 80)!r}")
            else:
                self.emit(0, "")
                self.emit(indent, f"# {words(rng, 2, 10)}")

    def function(self, indent: int, *, method: bool = False, nested_ok: bool = True) -> None:
        rng = self.rng
        self.emit(0, "")
        if rng.random() < 0.3:
            self.emit(indent, f"# {words(rng, 2, 10)}")
        decorators = ["@staticmethod", "@property", "@functools.lru_cache(maxsize=128)"]
        for deco in rng.sample(decorators if method else decorators[2:], rng.randint(0, 1)):
            self.emit(indent, deco)
        if rng.random() < 0.3:
            self.emit(indent, "@trace")
        args = "self, " if method else ""
        keyword = "async def" if rng.random() < 0.15 else "def"
        self.emit(indent, f"{keyword} {self.name('handle')}({args}total=0):")
        self.docstring(indent + 1)
        self.statements(indent + 1, rng.choice([1, 2, 4, 8, 20]))
        if nested_ok and rng.random() < 0.2:
            self.function(indent + 1, nested_ok=False)
        self.emit(indent + 1, "return total")

    def klass(self, indent: int) -> None:
        rng = self.rng
        self.emit(0, "")
        if rng.random() < 0.5:
            self.emit(indent, "@dataclasses.dataclass")
        self.emit(indent, f"class {self.name('Shape').title()}:")
        self.docstring(indent + 1)
        self.emit(indent + 1, f"scale = {rng.randint(1, 9)}")
        for _ in range(rng.randint(1, 6)):
            self.function(indent + 1, method=True)
        if indent == 0 and rng.random() < 0.2:
            self.klass(indent + 1)


def python_doc(seed: int) -> str:
    rng = random.Random(seed)
    w = PythonWriter(rng)
    w.docstring(0)
    w.emit(0, "import dataclasses")
    w.emit(0, "import functools")
    for _ in range(rng.randint(2, 10)):
        rng.choice([w.function, w.klass, lambda i: w.statements(i, 3)])(0)
    return "\n".join(w.lines) + "\n"


def python_units(text: str) -> tuple[list[Unit], list[Unit]]:
    """(functions and methods, every def and class) with their qualified names, from ``ast``.

    A span runs from the first decorator to the end of the body; ``ast`` columns are UTF-8
    bytes, converted to characters per line. ``lead`` takes in the comment lines directly
    above (same indentation, no blank line), which the parser makes part of the entity:
    its size decides whether the entity may be cut (see ``test_function_that_fits_...``).
    """
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]  # Python's breaks
    lines = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode(errors="ignore"))

    functions: list[Unit] = []
    entities: list[Unit] = []
    stack: list[tuple[ast.AST, str]] = [(ast.parse(text), "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                indent = " " * child.col_offset
                lead = first
                while lead > 1 and lines[lead - 2].startswith(indent + "#"):
                    lead -= 1
                qualname = f"{prefix}{child.name}"
                unit = Unit(
                    "class" if isinstance(child, ast.ClassDef) else "function",
                    offset(first, child.col_offset),
                    offset(child.end_lineno or child.lineno, child.end_col_offset or 0),
                    qualname,
                    starts[lead - 1],
                )
                entities.append(unit)
                if unit.kind == "function":
                    functions.append(unit)
                stack.append((child, qualname + "."))
            else:
                stack.append((child, prefix))
    return functions, entities


def expected_entity(text: str, entities: list[Unit], position: int) -> str | None:
    """The innermost def or class at ``position``; comment lines directly above a def
    (no blank line between) count as part of it, as they do for the parser."""
    line_start = text.rfind("\n", 0, position) + 1
    pos = line_start + len(text[line_start:position]) - len(text[line_start:position].lstrip())
    pos = pos if text.startswith("#", pos) else position
    while text.startswith("#", pos):
        pos = text.find("\n", pos) + 1
        while pos < len(text) and text[pos] == " ":
            pos += 1
    inside = [u for u in entities if u.start <= pos < u.end]
    return min(inside, key=lambda u: u.end - u.start).name if inside else None


@pytest.mark.parametrize(("tokenizer", "budget"), BUDGETS)
def test_generated_python_keeps_functions_and_names_entities(tokenizer: str, budget: int):
    chunker = chunker_for(tokenizer, budget)
    for seed in SEEDS:
        text = python_doc(seed)
        document = parse(text.encode(), f"gen_{seed}.py")
        assert "fallback" not in document.metadata, document.metadata["fallback"]
        functions, entities = python_units(text)
        chunks = assert_units_whole(document, chunker, functions, f"seed {seed}")
        for c in chunks:
            want = expected_entity(text, entities, c.start)
            assert c.entity == want, (seed, c.start, c.text[:60])
            if want and "." in want and any(u.name == want for u in functions):
                assert c.headings[-1] == want.rsplit(".", 1)[1], (seed, c.headings, want)


def test_python_generator_makes_methods_that_split():
    texts = [python_doc(seed) for seed in SEEDS]
    names = [u.name for t in texts for u in python_units(t)[0]]
    assert sum("." in n for n in names) > 20  # methods and nested functions
    chunker = chunker_for("cl100k_base", 30)
    oversize = [
        c for t in texts for c in chunker.chunk_document(parse(t.encode(), "g.py"))
        if c.metadata.get("oversize") in ("function", "method")
    ]  # fmt: skip
    assert oversize, "no function was over budget: the oversize path went untested"


# ----------------------------------------------------------------------------- corpus

CORPUS_BUDGETS = [("cl100k_base", 8), ("minilm", 24), ("minilm", 64), ("cl100k_base", 128)]


def parser_units(document: Document) -> list[Unit]:
    """Atomic blocks (fences, rows, functions …) and every other block, from the parser."""
    units, stack = [], list(document.blocks)
    while stack:
        block = stack.pop()
        units.append(Unit(block.kind, block.start, block.end))
        stack.extend(block.children)
    return units


@pytest.mark.parametrize(("tokenizer", "budget"), CORPUS_BUDGETS)
def test_corpus_never_cuts_a_block_that_fits(tokenizer: str, budget: int):
    """Any parser block that fits the budget is kept whole, unless it holds a hard cut (a
    PDF section's page break or subsection); an atomic one (code, row, function …) is cut
    only with ``oversize`` marked. Python is also checked with ``ast``."""
    chunker = chunker_for(tokenizer, budget)
    count = chunker.sizer._fn
    for path in FILES:
        document = parse(path.read_bytes(), path.name)
        chunks = chunker.chunk_document(document)
        assert_chunk_invariants(document, chunker, chunks)
        text = document.text
        hard = paged_cuts(document.blocks)
        for c, unit in cuts_through(chunks, parser_units(document)):
            if not text[c.end : unit.end].strip():
                continue  # only trailing whitespace of the block is left out
            after = len(text) - len(text[c.end :].lstrip())  # where the next chunk starts
            if hard is not None and hard.at(after):
                continue  # cut where a page turns or a section starts
            size = count(text[unit.start : unit.end].strip())
            assert size > budget, f"{path.name}: [{c.start}:{c.end}] cuts {unit} ({size})"
            if unit.kind in ATOMIC:
                assert c.metadata.get("oversize"), f"{path.name}: {unit} cut, no oversize"
        if document.mime == "text/x-python":
            functions, entities = python_units(text)
            assert_units_whole(document, chunker, functions, path.name)
            for c in chunks:
                assert c.entity == expected_entity(text, entities, c.start), (path, c.start)


# ----------------------------------------------------------------------------- known gaps


def _cut_functions_that_fit(text: str, budget: int) -> list[tuple[str, str]]:
    chunker = chunker_for("cl100k_base", budget)
    chunks = chunker.chunk_document(parse(text.encode(), "gap.py"))
    functions, _ = python_units(text)
    return [
        (unit.name, c.text)
        for c, unit in cuts_through(chunks, functions)
        if chunker.sizer._fn(text[unit.start : unit.end]) <= budget
    ]


def test_function_that_fits_is_not_cut_because_of_the_comment_above_it():
    text = "# " + "note " * 40 + "\ndef f(x):\n    y = x + 1\n    return y\n"
    assert _cut_functions_that_fit(text, 30) == []


def test_function_inside_a_compound_statement_is_not_cut():
    body = "".join(f"    x{i} = compute({i})\n" for i in range(7))
    text = (
        "try:\n" + body + "    def small(a, b):\n        c = a + b\n        d = c * 2\n"
        "        return d\nexcept ImportError:\n    pass\n"
    )
    assert _cut_functions_that_fit(text, 40) == []


def test_chunk_starting_in_a_gap_keeps_the_heading_of_the_block_it_holds():
    path = next(p for p in FILES if p.name == "config.json")
    chunks = chunker_for("minilm", 64).chunk_document(parse(path.read_bytes(), path.name))
    holder = next(c for c in chunks if c.text.lstrip(",\n ").startswith('"embedder"'))
    assert holder.headings == ("embedder",), (holder.text[:20], holder.headings)
