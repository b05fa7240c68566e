"""The HTML visualiser: render_html as a pure function, ``fissure show``, and a real browser."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fissure import Chunk, Chunker, Document
from fissure.chunker import load_document
from fissure.cli.show import show
from fissure.embed import HashingEmbedder
from fissure.viz import render_html

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = (
    "# Title <script>alert('x')</script>\n\n"
    'A "quoted" & <b>bold</b> claim. Another sentence </span></div> here.\n\n'
    "## Second <img src=x onerror=alert(1)>\n\nMore text, with &amp; entities &lt;kept&gt;.\n"
)


class _Chunks(HTMLParser):
    """Every ``class="chunk"`` element (they never nest): its attributes and text content."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[dict[str, str | None], str]] = []
        self.attrs: dict[str, str | None] | None = None  # the open chunk, if any
        self.parts: list[str] = []
        self.depth = 0  # spans open inside it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "span":
            return
        if self.attrs is not None:
            self.depth += 1
        elif dict(attrs).get("class") == "chunk":
            self.attrs, self.parts, self.depth = dict(attrs), [], 0

    def handle_endtag(self, tag: str) -> None:
        if tag != "span" or self.attrs is None:
            return
        if self.depth:
            self.depth -= 1
            return
        self.found.append((self.attrs, "".join(self.parts)))
        self.attrs = None

    def handle_data(self, data: str) -> None:
        if self.attrs is not None:
            self.parts.append(data)


def chunk_elements(page: str) -> list[tuple[dict[str, str | None], str]]:
    parser = _Chunks()
    parser.feed(page)
    parser.close()
    return parser.found


def check_page(page: str, document: Document, chunks: list) -> None:
    """Each chunk is exactly one element, with its offsets, index and exact text."""
    found = chunk_elements(page)
    assert len(found) == len(chunks)
    for (attrs, text), c in zip(found, chunks, strict=True):
        assert attrs["data-index"] == str(c.index)
        assert (int(attrs["data-start"]), int(attrs["data-end"])) == (c.start, c.end)
        assert attrs["data-tokens"] == str(c.n_tokens)
        assert text == c.text == document.text[c.start : c.end]


def traced(document: Document, strategy: str, **settings):
    embedder = HashingEmbedder() if strategy in ("semantic", "hybrid") else None
    return Chunker(strategy=strategy, embedder=embedder, **settings).trace_document(document)


@pytest.mark.parametrize("strategy", ["structural", "recursive", "semantic", "hybrid"])
@pytest.mark.parametrize("sample", ["fault-lines.md", "seismograph.py", "tremors.txt"])
def test_every_chunk_once_with_offsets(sample: str, strategy: str) -> None:
    document = load_document(SAMPLES / sample)
    result = traced(document, strategy, max_tokens=60)
    assert len(result.chunks) > 1
    page = render_html(document, result.chunks, result.trace)
    check_page(page, document, result.chunks)
    assert page.count("<svg") == (1 if strategy in ("semantic", "hybrid") else 0)


def test_page_is_self_contained() -> None:
    document = load_document(SAMPLES / "fault-lines.md")
    result = traced(document, "semantic", max_tokens=60)
    page = render_html(document, result.chunks, result.trace)
    page = page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, never fetched
    for external in ("<link", "src=", "@import", "url(", "http://", "https://"):
        assert external not in page


def test_text_and_metadata_are_escaped() -> None:
    document = Document.from_text(HOSTILE, source='<evil> & "x".md', mime="text/markdown")
    result = Chunker(strategy="sentence", max_tokens=12).trace_document(document)
    chunks = result.chunks
    assert len(chunks) > 2
    page = render_html(document, chunks, result.trace)
    assert "<script>alert" not in page
    assert "<img" not in page
    assert "<b>" not in page
    assert page.count("<script>") == 1  # only the page's own
    assert "&lt;evil&gt; &amp; &quot;x&quot;.md" in page
    check_page(page, document, chunks)


def test_hostile_metadata_stays_in_attributes() -> None:
    evil = "\"><script>alert(1)</script><i x='"
    document = Document.from_text("one two three", source="x.md")
    chunk = Chunk(
        "one two",
        0,
        7,
        document.id,
        0,
        2,
        (1, 1),
        "semantic",
        "x.md",
        headings=(evil, "B & C"),
        entity=evil,
        metadata={"cut": evil, "reason": evil},
    )
    page = render_html(document, [chunk], None)
    assert "<script>alert" not in page and "<i x=" not in page
    [(attrs, text)] = chunk_elements(page)
    assert text == "one two"
    assert attrs["data-headings"] == f"{evil} › B & C"  # escaped on the page, intact in the DOM
    assert attrs["data-entity"] == attrs["data-cut"] == attrs["data-reason"] == evil
    assert evil in (attrs["title"] or "")


def test_overlap_is_marked_and_chunks_stay_whole() -> None:
    document = load_document(SAMPLES / "tremors.txt")
    result = Chunker(strategy="recursive", max_tokens=40, overlap_tokens=10).trace_document(
        document
    )
    assert any(b.start < a.end for a, b in zip(result.chunks, result.chunks[1:], strict=False))
    page = render_html(document, result.chunks, None)
    assert 'class="overlap"' in page
    check_page(page, document, result.chunks)


def test_curve_marks_threshold_and_every_cut() -> None:
    document = load_document(SAMPLES / "fault-lines.md")
    result = traced(document, "semantic", max_tokens=60)
    page = render_html(document, result.chunks, result.trace)
    assert f"threshold {result.trace.label}" in page
    assert page.count('<line class="cut') == len(result.chunks) - 1
    for n in range(1, len(result.chunks)):
        assert f'href="#chunk-{n}"' in page


def test_empty_document() -> None:
    document = Document.from_text("")
    page = render_html(document, [], None)
    assert chunk_elements(page) == []
    assert page.startswith("<!DOCTYPE html>")


def test_show_command_writes_a_page(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(show)
    out = tmp_path / "page.html"
    args = [str(SAMPLES / "fault-lines.md"), "-s", "hybrid", "-e", "hashing", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--max-tokens", "60"])
    assert result.exit_code == 0, result.output
    assert "<svg" in out.read_text(encoding="utf-8")


def test_show_command_fails_cleanly(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(show)
    result = CliRunner().invoke(app, [str(tmp_path / "missing.md"), "-o", str(tmp_path / "p")])
    assert result.exit_code == 2
    assert "cannot read" in result.output
    assert "Traceback" not in result.output


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    command = [
        CHROMIUM or "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed: run scripts/install-chromium.sh",
)
@pytest.mark.parametrize(
    ("sample", "strategy"), [("fault-lines.md", "semantic"), ("seismograph.py", "hybrid")]
)
def test_browser_renders_every_chunk(sample: str, strategy: str, tmp_path: Path) -> None:
    document = load_document(SAMPLES / sample)
    result = traced(document, strategy, max_tokens=60)
    page = tmp_path / f"{sample}.html"
    page.write_text(render_html(document, result.chunks, result.trace), encoding="utf-8")
    url = page.as_uri()
    shot = tmp_path / f"{sample}.png"
    _chromium(f"--screenshot={shot}", "--window-size=1200,2000", url, profile=tmp_path / "p1")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page compresses to a few KB
    dom = _chromium("--dump-dom", url, profile=tmp_path / "p2").stdout
    check_page(dom, document, result.chunks)
    assert "<svg" in dom and "polyline" in dom
