"""The content half of the hostile corpus (issue 13): files built to exhaust memory or time.

Every ``build_<case>(folder)`` writes one hostile file and two good files into ``folder`` and
returns the expected outcome for the hostile file:

- ``"chunks"``: it is chunked (within the limits);
- ``"fallback: TEXT"``: it is chunked, and fissure reports a fallback mentioning ``TEXT``;
- ``"error: TEXT"``: it is refused with a reason mentioning ``TEXT`` (a skip line from
  ``fissure chunk``, a dead letter from ``fissure ingest``); the run still succeeds.

The files are built at test time, large where a smaller file would not show the failure
(a 9.8 MB CSV and a 10.1 MB Python list literal, half the issue's sizes and still over the
limits and over the memory ceiling without them), otherwise small (a DOCX bomb of a few
hundred KB). :data:`CASES` lists them with the extra command-line
arguments a case needs and whether it is slow. :func:`good_phrase` is what ``fissure query``
must find afterwards.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.chunk_checks import corpus_maker

GOOD_MD = "good-notes.md"
GOOD_PY = "good-code.py"


def good_phrase(folder: Path) -> str:
    """A sentence of the good Markdown file in ``folder`` (unique to its case)."""
    return f"The {folder.name} lighthouse keeper records the tidal heights at dawn."


def _good(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tag = folder.name.replace("-", "_")
    (folder / GOOD_MD).write_text(f"# Tide log\n\n{good_phrase(folder)}\n\nCalm seas today.\n")
    (folder / GOOD_PY).write_text(f"def {tag}_tide_gauge(level):\n    return level * 2\n")


# ----------------------------------------------------------------- output and memory (8)


def build_json_breadcrumb(folder: Path) -> str:
    """Case 8: 2.2 MB of JSON, 30 nested objects with 10 KB keys around 6,000 leaves: the
    whole breadcrumb used to be copied onto every chunk (1.2 GB of JSONL)."""
    _good(folder)
    leaves = ",".join(f'"leaf{i}": "{"reading " * 38}{i}"' for i in range(6000))
    text = "{" + leaves + "}"
    for depth in range(30):
        text = '{"' + f"level{depth:02d}-" * 1000 + '": ' + text + "}"
    (folder / "breadcrumb.json").write_text(text)
    return "chunks"


# ----------------------------------------------------------------- archives and PDF (11)


def _docx_parts() -> dict[str, bytes]:
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("A small report.")
    document.save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write_docx(path: Path, parts: dict[str, bytes], big: tuple[str, bytes, int] | None = None,
                ) -> None:  # fmt: skip
    """A DOCX of ``parts``; ``big`` = (member, unit, copies) is written streaming."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for name, data in parts.items():
            if big is not None and name == big[0]:
                head, _, tail = data.partition(b"<w:body>")
                with out.open(name, "w", force_zip64=True) as member:
                    member.write(head + b"<w:body>")
                    block = big[1] * 10_000
                    for _ in range(big[2] // 10_000):
                        member.write(block)
                    member.write(tail[tail.index(b"<w:sectPr") :])
            else:
                out.writestr(name, data)


def build_docx_bomb(folder: Path) -> str:
    """Case 11: a DOCX whose document.xml inflates 340 times to 200 MB (the issue's 5 MB
    one: 10.3 GB of RSS); refused before python-docx reads it."""
    _good(folder)
    paragraph = b"<w:p><w:r><w:t>lorem ipsum dolor sit amet</w:t></w:r></w:p>"
    _write_docx(folder / "bomb.docx", _docx_parts(),
                ("word/document.xml", paragraph, 200_000_000 // len(paragraph)))  # fmt: skip
    return "error: inflates past"


def build_docx_entities(folder: Path) -> str:
    """Billion laughs: document.xml declares nested entities."""
    _good(folder)
    parts = _docx_parts()
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    xml = parts["word/document.xml"]
    declaration, _, rest = xml.partition(b"?>")
    parts["word/document.xml"] = (
        declaration + b"?>" + f"<!DOCTYPE w:document [{entities}]>".encode() + rest
    ).replace(b"A small report.", b"&lol9;")
    _write_docx(folder / "laughs.docx", parts)
    return "error: declares a DTD"


def build_docx_many_members(folder: Path) -> str:
    """A DOCX with 20,000 members (a zip of many tiny entries)."""
    _good(folder)
    parts = _docx_parts()
    parts.update({f"word/media/pad{i}.bin": b"" for i in range(20_000)})
    _write_docx(folder / "members.docx", parts)
    return "error: members in the archive"


def build_docx_forged_size(folder: Path) -> str:
    """A DOCX whose central directory says document.xml holds 1 KB; it inflates to 50 MB.
    ``zipfile`` reads no more than the declared size, so the parser sees a truncated part."""
    _good(folder)
    path = folder / "forged.docx"
    paragraph = b"<w:p><w:r><w:t>forged</w:t></w:r></w:p>"
    _write_docx(path, _docx_parts(), ("word/document.xml", paragraph, 50_000_000 // len(paragraph)))
    data = bytearray(path.read_bytes())
    name = b"word/document.xml"
    entry = -1
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:  # central directory entries
        length = int.from_bytes(data[at + 28 : at + 30], "little")
        if data[at + 46 : at + 46 + length] == name:
            entry = at
            break
        at += 4
    assert entry >= 0, "no central directory entry for document.xml"
    data[entry + 24 : entry + 28] = (1024).to_bytes(4, "little")  # the uncompressed size
    path.write_bytes(bytes(data))
    return "error: DOCX"


def _pdf(objects: dict[int, bytes]) -> bytes:
    return corpus_maker().write_pdf(objects)  # type: ignore[no-any-return]


def build_pdf_bomb(folder: Path) -> str:
    """Case 11: a PDF page whose content stream inflates to 400 MB (the issue's 4.8 MB PDF
    held a 2 GB Flate stream and took > 10 GB); refused before pdfium reads it."""
    _good(folder)
    deflate = zlib.compressobj(9)
    parts = [deflate.compress(b"BT /F1 12 Tf 72 700 Td (bomb page) Tj ET\n")]
    spaces = b" " * 1_000_000
    parts += [deflate.compress(spaces) for _ in range(400)]
    stream = b"".join(parts) + deflate.flush()
    (folder / "bomb.pdf").write_bytes(_pdf({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
           b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        5: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream
           + b"\nendstream",
    }))  # fmt: skip
    return "error: inflates past"


def build_csv_unclosed_quote(folder: Path) -> str:
    """Case 11: 9.8 MB of CSV, an unclosed quote near the top, 0.9 million short records
    (the issue's 3 million identical ``x,y,z`` took 4.5 GB of RSS, 1.5 KB per record, so
    this many would take 1.3 GB, over the ceiling): records are grouped past the block
    limit, nine times over. The records differ, so the chunks do: identical vectors make
    Chroma's index write about 5 times slower (``bench/store_write.py``), which is not
    what this case is about."""
    _good(folder)
    rows = "".join(f"{i},y,z\n" for i in range(900_000))
    (folder / "quote.csv").write_text('a,b,c\n"unclosed,1,2\n' + rows)
    return "fallback: grouped into rows"


def build_python_list_literal(folder: Path) -> str:
    """Case 11: a 10.1 MB Python list literal (the issue's 18.9 MB took 2.7 GB of ``ast``;
    this one would take 1.4 GB): over both ``limits.MAX_AST_CHARS`` and
    ``limits.MAX_TREE_SITTER_BYTES``, so parsed as text, as the issue's file is."""
    _good(folder)
    numbers = ", ".join(str(i) for i in range(1_250_000))
    (folder / "table.py").write_text(f"VALUES = [{numbers}]\n")
    return "fallback: ast limit"


def build_html_nested_divs(folder: Path) -> str:
    """Case 11: 3.3 MB of HTML, 300,000 nested ``<div>`` (> 300 s, quadratic in the tree
    builder): tags past the depth limit are dropped, their text kept."""
    _good(folder)
    (folder / "nested.html").write_text(
        "<html><body>" + "<div>" * 300_000 + "deep text" + "</div>" * 300_000 + "</body></html>"
    )
    return "fallback: elements deep"


def build_js_nested_functions(folder: Path) -> str:
    """80,000 nested JavaScript functions (the tree-sitter query took 2 minutes)."""
    _good(folder)
    (folder / "nested.js").write_text("function f(){" * 80_000 + "}" * 80_000 + "\n")
    return "chunks"


# ----------------------------------------------------------------- time (12)


def build_semantic_prose(folder: Path) -> str:
    """Case 12: 500 KB of prose for ``--strategy semantic``: legitimate work that a plain
    120 s timeout killed on two cores. Embedding time does not count against it now."""
    _good(folder)
    rng = random.Random(12)
    words = ["the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with",
             "be", "by", "on", "not", "this", "are", "or", "from", "at", "which"]  # fmt: skip
    topics = ["seismic fault", "river delta", "glacier", "volcano", "coral reef", "dune"]
    paragraphs, size = [], 0
    while size < 500_000:
        topic = rng.choice(topics)
        sentences = [" ".join(rng.choice(words) for _ in range(rng.randrange(8, 20))).capitalize()
                     + f" about the {topic}." for _ in range(rng.randrange(3, 8))]  # fmt: skip
        paragraphs.append(" ".join(sentences))
        size += len(paragraphs[-1]) + 2
    (folder / "essay.txt").write_text("\n\n".join(paragraphs))
    return "chunks"


# ----------------------------------------------------------------- from tests/test_hostile.py


def build_garbled_pdf(folder: Path) -> str:
    """A valid PDF with a fifth of its bytes overwritten."""
    _good(folder)
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"}  # fmt: skip
    data = bytearray(_pdf(objects))
    rng = random.Random(2)
    for _ in range(len(data) // 5):
        data[rng.randrange(16, len(data))] = rng.randrange(256)
    (folder / "garbled.pdf").write_bytes(bytes(data))
    return "error: PDF"


def build_binary_markdown(folder: Path) -> str:
    """Binary bytes behind a ``.md`` name."""
    _good(folder)
    (folder / "binary.md").write_bytes(bytes(range(256)) * 64)
    return "error: no parser"


def build_deep_json(folder: Path) -> str:
    """10,000 nested arrays."""
    _good(folder)
    (folder / "deep.json").write_text("[" * 10_000 + "1" + "]" * 10_000)
    return "chunks"


def build_ten_mb_line(folder: Path) -> str:
    """One 10 MB line of text without spaces."""
    _good(folder)
    (folder / "line.txt").write_text("x" * 10_000_000)
    return "chunks"


def build_deep_notebook(folder: Path) -> str:
    """A notebook whose JSON is 10,000 nested arrays (not a notebook at all)."""
    _good(folder)
    (folder / "deep.ipynb").write_text("[" * 10_000 + "]" * 10_000)
    return "chunks"


# ------------------------------------------------------------- limits in every command (33)


def build_js_nested_brackets(folder: Path) -> str:
    """200 KB of script, ``var x =`` and 200,000 ``[``: a syntax-tree query that runs for
    minutes in compiled code, under the size that ``fissure chunk`` used to chunk in its
    own process, where ``--timeout`` could not reach it."""
    _good(folder)
    (folder / "brackets.js").write_text("var x = " + "[" * 200_000)
    return "error: took longer than"


def _utf16_without_bom(folder: Path, codec: str) -> str:
    """Text in UTF-16 without a byte-order mark, as Windows tools write it (it used to be
    refused as binary for its NUL bytes)."""
    _good(folder)
    text = "Quarterly notes\r\n\r\nThe harbour crane was serviced on Tuesday.\r\n" * 40
    (folder / "notes.txt").write_bytes(text.encode(codec))
    return "chunks"


def build_utf16le_without_bom(folder: Path) -> str:
    """UTF-16 little-endian without a byte-order mark."""
    return _utf16_without_bom(folder, "utf-16-le")


def build_utf16be_without_bom(folder: Path) -> str:
    """UTF-16 big-endian without a byte-order mark."""
    return _utf16_without_bom(folder, "utf-16-be")


def build_unk_runs(folder: Path) -> str:
    """JSON values of 10 KB without a space, each one ``[UNK]`` to MiniLM: chunks of 10 KB
    counted as 1 token unless the character ceiling cuts them."""
    _good(folder)
    values = ",".join(f'"k{i}": "{chr(97 + i % 26) * 10_000}"' for i in range(200))
    (folder / "runs.json").write_text("{" + values + "}")
    return "chunks"


def build_csv_15k_chunks(folder: Path) -> str:
    """One CSV of 15,000 distinct rows of about 1 KB, one chunk each: the store write of
    one large document."""
    _good(folder)
    rng = random.Random(33)
    words = ("harbour", "crane", "tide", "ledger", "cargo", "berth", "pilot", "quay")
    rows = ["id,berth,note"] + [
        f"{i},{rng.randrange(90)},{' '.join(rng.choice(words) for _ in range(150))}"
        for i in range(15_000)
    ]
    (folder / "berths.csv").write_text("\n".join(rows) + "\n")
    return "chunks"


@dataclass(frozen=True)
class Case:
    """A hostile case: its builder, the extra arguments for ``fissure chunk`` and
    ``fissure ingest``, and whether it is too slow for every test run."""

    name: str
    build: Callable[[Path], str]
    args: tuple[str, ...] = ()
    slow: bool = False
    issue: str = ""  # the row of the issue's table it reproduces


CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case("json_breadcrumb", build_json_breadcrumb, issue="8"),
        Case("docx_bomb", build_docx_bomb, issue="11"),
        Case("docx_entities", build_docx_entities, issue="11"),
        Case("docx_many_members", build_docx_many_members, issue="11"),
        Case("docx_forged_size", build_docx_forged_size, issue="11"),
        Case("pdf_bomb", build_pdf_bomb, issue="11"),
        Case("csv_unclosed_quote", build_csv_unclosed_quote, slow=True, issue="11"),
        Case("python_list_literal", build_python_list_literal, slow=True, issue="11"),
        Case("html_nested_divs", build_html_nested_divs, issue="11"),
        Case("js_nested_functions", build_js_nested_functions, issue="11"),
        Case(
            "semantic_prose",
            build_semantic_prose,
            ("--strategy", "semantic"),
            slow=True,
            issue="12",
        ),  # fmt: skip
        Case("garbled_pdf", build_garbled_pdf),
        Case("binary_markdown", build_binary_markdown),
        Case("deep_json", build_deep_json),
        Case("ten_mb_line", build_ten_mb_line),
        Case("deep_notebook", build_deep_notebook),
        Case("js_nested_brackets", build_js_nested_brackets, ("--timeout", "10"), issue="33"),
        Case("utf16le_without_bom", build_utf16le_without_bom, issue="33"),
        Case("utf16be_without_bom", build_utf16be_without_bom, issue="33"),
        Case("unk_runs", build_unk_runs, issue="33"),
        Case("csv_15k_chunks", build_csv_15k_chunks, slow=True, issue="33"),
    )
}
