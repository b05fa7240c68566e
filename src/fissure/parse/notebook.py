"""Jupyter notebooks through nbformat: cells become blocks, nothing is executed.

``Document.text`` is the cells' sources in order, each under a jupytext-style marker line
(``# %% [markdown]``, ``# %%``), separated by blank lines: a reader (or a model) sees where
a cell starts and what kind it is, and the markers sit between cell blocks, so a chunk that
stays inside one cell never contains one. Markdown cells are parsed by the Markdown parser
with offsets shifted into the notebook text; a Markdown cell that starts with a heading opens
a section that runs over the following cells, so code cells carry the notebook's outline.
Outputs are dropped unless asked for.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import nbformat

from fissure import limits
from fissure.parse.markdown import markdown_blocks
from fissure.parse.text import nest_sections
from fissure.spans import trim_end
from fissure.types import Block, Document

MIME = "application/x-ipynb+json"
CELL_SEPARATOR = "\n\n"
_MARKERS = {"markdown": "# %% [markdown]\n", "raw": "# %% [raw]\n"}
_CODE_MARKER = "# %%\n"
_OUTPUT_MARKER = "# output\n"


class NotebookLevel(IntEnum):
    """Boundary ranks in notebooks (lower is stronger); headings keep Markdown's 1–6."""

    CELL = 8
    OUTPUT = 9


def parse(text: str, *, source: str, outputs: bool = False) -> Document:
    """Parse a notebook's JSON into cell blocks over the joined cell sources.

    Args:
        text: The notebook file (JSON).
        source: Its path or URI.
        outputs: Also index text outputs (stream text and ``text/plain`` results) after
            their code cell, as ``output`` blocks.

    Returns:
        A document whose blocks are ``cell`` blocks (``metadata["cell"]`` = cell index,
        ``metadata["cell_type"]``), grouped into ``section`` blocks by Markdown headings.

    Raises:
        ValueError: Over :data:`fissure.limits.MAX_CELLS` cells (nbformat keeps a few KB per
            cell), a file that is not JSON naming notebook format 3 or 4, or cells that
            are not notebook cells (nbformat reads them without complaint); the registry
            then parses the file as plain text.
    """
    if text.count('"cell_type"') > limits.MAX_CELLS:
        raise ValueError(f"a notebook of more than {limits.MAX_CELLS:,} cells")
    data = _checked_json(text)
    try:
        # From the JSON already read; no schema validation (nbformat's only logs its
        # findings, and _check_cells checks what the blocks need).
        major, minor = nbformat.reader.get_version(data)
        as_read = nbformat.versions[major].to_notebook_json(data, minor=minor)
        notebook = nbformat.convert(as_read, 4)
    except (AttributeError, TypeError, KeyError, IndexError) as exc:  # nbformat on odd JSON
        raise ValueError(f"not a valid notebook ({type(exc).__name__}: {exc})") from None
    _check_cells(notebook)
    language = _language(notebook)
    parts: list[str] = []
    cells: list[Block] = []
    cursor = 0
    for index, cell in enumerate(notebook.cells):
        source_text = cell.get("source") or ""
        marker = _MARKERS.get(cell.cell_type, _CODE_MARKER)
        piece = (CELL_SEPARATOR if parts else "") + marker
        start = cursor + len(piece)
        parts.append(piece + source_text)
        cursor = start + len(source_text)
        cells.append(_cell_block(cell, index, source_text, start, language))
        if outputs and cell.cell_type == "code":
            cursor = _add_outputs(cell, index, parts, cells, cursor)
    joined = "".join(parts)
    metadata = {"cells": len(notebook.cells), "language": language, "outputs": outputs}
    blocks = nest_sections([c for c in cells if c.end > c.start], _heading_cell)
    return Document.from_text(joined, source=source, mime=MIME, blocks=blocks, metadata=metadata)


def _cell_block(cell: Any, index: int, text: str, start: int, language: str | None) -> Block:
    end = start + trim_end(text, 0, len(text))[1]
    metadata: dict[str, Any] = {"cell": index, "cell_type": cell.cell_type}
    if cell.cell_type != "markdown":
        if cell.cell_type == "code":
            metadata["lang"] = language
        kind = "code" if cell.cell_type == "code" else "cell"
        return Block(kind, start, end, NotebookLevel.CELL, None, (), metadata)
    children = markdown_blocks(text, offset=start)
    first = children[0] if children else None
    if first is not None and first.kind == "section" and first.start == start:
        # The cell opens a notebook section (see _heading_cell): the section carries the
        # title, so the cell holds the Markdown section's children rather than a duplicate.
        metadata["heading"] = (first.level, first.title)
        children = (*first.children, *children[1:])
    return Block("cell", start, end, NotebookLevel.CELL, None, children, metadata)


def _heading_cell(block: Block) -> tuple[int, str | None] | None:
    return block.metadata.get("heading")


def _add_outputs(cell: Any, index: int, parts: list[str], cells: list[Block], cursor: int) -> int:
    for output in cell.get("outputs", ()):
        text = output.get("text") if output.output_type == "stream" else None
        if text is None:
            text = output.get("data", {}).get("text/plain")
        if not text:
            continue
        piece = CELL_SEPARATOR + _OUTPUT_MARKER
        start = cursor + len(piece)
        parts.append(piece + text)
        cursor = start + len(text)
        end = start + trim_end(text, 0, len(text))[1]
        metadata = {"cell": index, "output_type": output.output_type}
        cells.append(Block("output", start, end, NotebookLevel.OUTPUT, None, (), metadata))
    return cursor


def _checked_json(text: str) -> dict[str, Any]:
    """The notebook's JSON; ValueError unless it names notebook format 3 or 4 (what Jupyter
    has written since 2012): without the key nbformat takes a file for format 1 and its old
    upgrade code fails on anything odd with errors of its own (UnboundLocalError)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not a valid notebook: not JSON ({exc})") from None
    except RecursionError:
        raise ValueError("not a valid notebook: JSON nested too deeply to read") from None
    version = data.get("nbformat") if isinstance(data, dict) else None
    if type(version) is not int or version not in (3, 4):
        raise ValueError(f"not a valid notebook: nbformat is {version!r}, not 3 or 4")
    return data


def _check_cells(notebook: Any) -> None:
    """Raise ValueError unless every cell has a known type and a text source."""
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise ValueError("not a valid notebook: 'cells' is not a list")
    for index, cell in enumerate(cells):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if kind not in ("code", "markdown", "raw"):
            raise ValueError(f"not a valid notebook: cell {index} has cell_type {kind!r}")
        if not isinstance(cell.get("source", ""), str):
            raise ValueError(f"not a valid notebook: cell {index} has no text source")
        outputs = cell.get("outputs", [])
        if not isinstance(outputs, list) or not all(
            isinstance(o, dict) and isinstance(o.get("output_type"), str) for o in outputs
        ):
            raise ValueError(f"not a valid notebook: cell {index} has malformed outputs")


def _language(notebook: Any) -> str | None:
    meta = notebook.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        section = meta.get(key)
        value = section.get(field) if isinstance(section, dict) else None
        if isinstance(value, str) and value:
            return value
    return None
