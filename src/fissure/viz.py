"""A self-contained HTML page that shows where a document was cut, and why.

:func:`render_html` is a pure function: document, chunks and (for ``semantic`` and
``hybrid``) the semantic trace in, one HTML string out, with no external assets. Each chunk
is one ``<span class="chunk">`` holding exactly ``document.text[start:end]``, with its
offsets, size and cut reason in ``data-`` attributes; the text between chunks is shown as
it is, so a page of non-overlapping chunks reads as the whole document. Where a chunk
reaches back over its predecessor (overlap), that part is striped. The semantic trace
becomes an inline SVG: the cosine distance at every boundary between atoms, the threshold,
and the boundaries chosen as cuts. Every piece of text is escaped; the one script on the
page reads ``data-`` attributes and writes them with ``textContent`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from fissure.split.semantic import Trace
from fissure.types import Chunk, Document

_HUES = (212, 32, 150, 280, 0, 190)
_W, _H, _PAD = 1000, 220, 36  # SVG viewBox and plot margin
# What a hover shows, in order; the page's script repeats this list.
_LABELS = (
    ("index", "chunk"),
    ("tokens", "tokens"),
    ("lines", "lines"),
    ("headings", "in"),
    ("entity", "entity"),
    ("cut", "cut at its end"),
    ("reason", "why"),
)

_CSS = """
:root { color-scheme: light; --ink: #1d232b; --muted: #5b6673; }
body { margin: 0; font: 14px/1.5 system-ui, sans-serif; color: var(--ink); background: #fbfbfa; }
header { padding: 12px 20px; border-bottom: 1px solid #ddd; background: #fff; }
header h1 { font-size: 17px; margin: 0 0 4px; word-break: break-all; }
header p { margin: 0; color: var(--muted); }
#info { position: sticky; top: 0; z-index: 2; padding: 6px 20px; min-height: 22px;
  background: #22303c; color: #f2f4f6; font: 12.5px/1.5 ui-monospace, monospace;
  white-space: pre-wrap; }
main { padding: 12px 20px 40px; }
.curve { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px;
  margin-bottom: 14px; }
.curve svg { width: 100%; height: auto; display: block; }
.curve figcaption { color: var(--muted); font-size: 12.5px; }
.doc { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; padding: 14px;
  border: 1px solid #ddd; border-radius: 6px; font: 13px/1.65 ui-monospace, monospace; }
.chunk { background: hsl(var(--h) 80% 89%); box-shadow: inset 2px 0 0 hsl(var(--h) 60% 45%);
  border-radius: 3px; cursor: help; }
.chunk::before { content: attr(data-index); font: 10px/1 system-ui, sans-serif;
  color: #fff; background: hsl(var(--h) 55% 40%); border-radius: 3px; padding: 1px 4px;
  margin-right: 3px; vertical-align: 2px; }
.chunk:hover { background: hsl(var(--h) 90% 78%); outline: 1px solid hsl(var(--h) 60% 40%); }
.overlap { background: repeating-linear-gradient(135deg, hsl(var(--h) 80% 82%) 0 5px,
  #ffe08a 5px 10px); }
.gap { color: #aaa; }
.cut { stroke: #2a7f62; stroke-width: 1.5; }
.cut.structural { stroke: #7a5cc7; }
.cut.budget { stroke: #d1495b; }
.cut:hover { stroke-width: 4; }
"""

_SCRIPT = """
(function () {
  var info = document.getElementById('info');
  var idle = info.textContent;
  var fields = [['index', 'chunk '], ['tokens', 'tokens '], ['lines', 'lines '],
    ['headings', 'in '], ['entity', 'entity '], ['cut', 'cut at its end: '], ['reason', 'why: ']];
  function show(el) {
    var parts = [];
    fields.forEach(function (f) {
      var v = el.getAttribute('data-' + f[0]);
      if (v) { parts.push(f[1] + v); }
    });
    info.textContent = parts.join('  \\u00b7  ');
  }
  document.querySelectorAll('.chunk').forEach(function (el) {
    el.addEventListener('mouseenter', function () { show(el); });
    el.addEventListener('mouseleave', function () { info.textContent = idle; });
  });
})();
"""


def render_html(document: Document, chunks: Sequence[Chunk], trace: Trace | None) -> str:
    """One self-contained HTML page showing ``chunks`` over ``document``.

    Args:
        document: The document the chunks index into.
        chunks: Its chunks, in order (their offsets must index ``document.text``).
        trace: The semantic trace from :meth:`~fissure.chunker.Chunker.trace_document`,
            or ``None`` (no distance curve is drawn).

    Returns:
        The page as a string; every document character and metadata value is escaped.
    """
    strategy = chunks[0].strategy if chunks else "none"
    sizes = [c.n_tokens for c in chunks]
    summary = (
        f"{len(chunks)} chunks · strategy {strategy} · tokens per chunk: "
        f"max {max(sizes, default=0)}, min {min(sizes, default=0)} · "
        f"{len(document.text):,} characters · {document.mime}"
    )
    if any(b.start < a.end for a, b in zip(chunks, chunks[1:], strict=False)):
        summary += " · striped text repeats the end of the chunk before (overlap)"
    # A chunk's cut and reason describe the cut at its end, i.e. where the next one starts.
    forced = {c.index + 1 for c in chunks if str(c.metadata.get("reason", "")).startswith("budget")}
    curve = _curve(trace, forced) if trace is not None else ""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>fissure · {escape(document.source)}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<header><h1>{escape(document.source)}</h1><p>{escape(summary)}</p></header>",
            '<div id="info">Hover a chunk to see its size, lines, place and cut reason.</div>',
            "<main>",
            curve,
            f'<div class="doc">{_body(document.text, chunks)}</div>',
            "</main>",
            f"<script>{_SCRIPT}</script>",
            "</body></html>",
        ]
    )


def _body(text: str, chunks: Sequence[Chunk]) -> str:
    """The chunks in order, each one element; uncovered text between them as gaps."""
    out: list[str] = []
    shown = 0  # end of the text already on the page
    for k, c in enumerate(chunks):
        if c.start > shown:
            out.append(f'<span class="gap">{escape(text[shown : c.start])}</span>')
        reach = min(max(shown, c.start), c.end)  # this chunk's start overlaps up to here
        inner = escape(text[reach : c.end])
        if reach > c.start:
            inner = f'<span class="overlap">{escape(text[c.start : reach])}</span>{inner}'
        out.append(f"<span {_attributes(c, k)}>{inner}</span>")
        shown = max(shown, c.end)
    if shown < len(text):
        out.append(f'<span class="gap">{escape(text[shown:])}</span>')
    return "".join(out)


def _attributes(c: Chunk, k: int) -> str:
    meta = c.metadata
    facts = {
        "index": str(c.index),
        "start": str(c.start),
        "end": str(c.end),
        "tokens": str(c.n_tokens),
        "lines": f"{c.lines[0]}–{c.lines[1]}",
        "headings": " › ".join(c.headings),
        "entity": c.entity or "",
        "cut": str(meta.get("cut", "")),
        "reason": str(meta.get("reason", "")),
    }
    title = "\n".join(f"{label}: {facts[key]}" for key, label in _LABELS if facts[key])
    data = " ".join(f'data-{key}="{escape(value)}"' for key, value in facts.items())
    return (
        f'class="chunk" id="chunk-{c.index}" style="--h:{_HUES[k % len(_HUES)]}" {data} '
        f'title="{escape(title)}"'
    )


def _curve(trace: Trace, forced: set[int]) -> str:
    """An SVG of the boundary distances, the threshold and the chosen cuts (``forced``:
    the chunks whose cut the token budget forced)."""
    d = trace.distances
    if not d:
        return '<figure class="curve"><figcaption>No boundaries to score.</figcaption></figure>'
    top = max(max(d), trace.threshold if trace.threshold < float("inf") else 0.0) or 1.0
    lo = min(0.0, min(d))

    def x(i: float) -> float:
        return _PAD + (_W - 2 * _PAD) * (i / max(len(d) - 1, 1))

    def y(v: float) -> float:
        return _H - _PAD - (_H - 2 * _PAD) * ((v - lo) / ((top - lo) or 1.0))

    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(d))
    parts = [
        f'<svg viewBox="0 0 {_W} {_H}" xmlns="http://www.w3.org/2000/svg" role="img" '
        'aria-label="semantic distance at each boundary">',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        _label(4, y(top) + 4, f"{top:.2f}", "start"),
        _label(4, _H - _PAD + 4, f"{lo:.2f}", "start"),
        _label(_W / 2, _H - 8, f"boundary between atoms (1 … {len(d)})", "middle"),
    ]
    for n, atom in enumerate(trace.cuts[1:], start=1):
        b = atom - 1  # the boundary in front of this atom
        if 0 <= b < len(d):
            why = "budget" if n in forced else "semantic" if d[b] > trace.threshold else "structure"
            kind = {"budget": "cut budget", "structure": "cut structural"}.get(why, "cut")
            parts.append(
                f'<a href="#chunk-{n}"><line class="{kind}" x1="{x(b):.1f}" y1="{_PAD}" '
                f'x2="{x(b):.1f}" y2="{_H - _PAD}"><title>chunk {n} starts here: distance '
                f"{d[b]:.3f} ({why} cut)</title></line></a>"
            )
    parts.append(f'<polyline fill="none" stroke="#2b4c7e" stroke-width="1.5" points="{points}"/>')
    if trace.threshold < float("inf"):
        ty = y(trace.threshold)
        parts += [
            f'<line x1="{_PAD}" y1="{ty:.1f}" x2="{_W - _PAD}" y2="{ty:.1f}" stroke="#e07a1f" '
            'stroke-dasharray="6 4" stroke-width="1.5"/>',
            _label(_W - _PAD, ty - 5, f"threshold {trace.label} = {trace.threshold:.3f}", "end"),
        ]
    parts.append("</svg>")
    caption = (
        f"Cosine distance across each of {len(d)} boundaries between {len(trace.atoms)} atoms; "
        f"dashed: threshold ({trace.label}); cuts in green where the distance is above it, "
        "purple where structure chose the cut (hybrid), red where the token budget forced it. "
        "Click a cut to jump to its chunk."
    )
    figure = "".join(parts) + f"<figcaption>{escape(caption)}</figcaption>"
    return f'<figure class="curve">{figure}</figure>'


def _label(x: float, y: float, text: str, anchor: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="12" fill="#5b6673" '
        f'text-anchor="{anchor}">{escape(text)}</text>'
    )
