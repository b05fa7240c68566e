"""The measured figures behind fissure's advice, each quoted from a committed result page.

Every :class:`Evidence` names the file under ``bench/results/`` it comes from and the exact
lines it quotes; the tests check that each quote is still in that file and that every
number the figure states appears in its quotes, so the advice cannot drift away from what
was measured.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Evidence:
    """A measured figure and where it was measured.

    Attributes:
        figure: The figure, as the advice states it.
        source: The result page, relative to the repository (``bench/results/…``).
        quotes: Lines of that page the figure is read from, verbatim.
    """

    figure: str
    source: str
    quotes: tuple[str, ...]


CODE_STRUCTURE = Evidence(
    "on 26 stdlib files, structural:200 ends 0.4 % of its chunks inside a function it "
    "could have held whole (recursive:200:0 6.2 %, fixed:200 56.9 %), with line recall@5 "
    "level (69.4 vs 67.0 and 68.0; one query is 0.4 points)",
    "bench/results/eval-code.md",
    ("| structural:200 | 549 | 142 | 71.9 | 48.1 | 55.5 | 69.4 | 9.0 | 732.2 | 73.8 | 0.4 | 0 |",
     "| recursive:200:0 | 544 | 143 | 72.3 | 49.7 | 56.2 | 67.0 | 8.6 | 717.7 | 73.7 | 6.2 | 0 |",
     "| fixed:200 | 401 | 195 | 74.6 | 51.1 | 56.4 | 68.0 | 6.6 | 977.8 | 67.2 | 56.9 | 0 |",
     "With 260 queries one query is 0.4 points", "260 queries over 26 stdlib files"),
)  # fmt: skip

CODE_BUDGET = Evidence(
    "structural:200+min=50 vs structural:200 on code: hit@5 73.5 vs 71.9, line recall@5 "
    "71.0 vs 69.4 (within noise: differences under ~5 points are not significant)",
    "bench/results/eval-code.md",
    ("| structural:200+min=50 | 520 | 150 | 73.5 | 49.8 | 57.3 | 71.0 | 8.7 |",
     "| structural:200 | 549 | 142 | 71.9 | 48.1 | 55.5 | 69.4 | 9.0 |",
     "so differences under ~5 points between rows are not significant"),
)  # fmt: skip

PROSE_STRUCTURE = Evidence(
    "on Chroma's chunking benchmark (472 questions, MiniLM, k = 5), structural:200 has "
    "recall 78.0 (IoU 5.9) against 75.6 (IoU 6.2) for the report's recursive 200-token "
    "splitter",
    "bench/results/eval-chroma.md",
    ("| structural:200 | 2192 | 150 | **78.0** | 5.9 | 5.9 |",
     "| recursive:200:0 (report baseline) | 2386 | 137 | 75.6 | 6.2 | 6.2 |",
     "(472 questions, 5 corpora)"),
)  # fmt: skip

PROSE_SEMANTIC = Evidence(
    "on Chroma's chunking benchmark, semantic:150+min=60 has recall 77.5 at IoU 7.2, "
    "structural:150+min=60 76.0 at IoU 7.2; the corpora are mostly flat prose",
    "bench/results/eval-chroma.md",
    ("| semantic:150+min=60 | 2739 | 120 | **77.5** | 7.3 | **7.2** |",
     "| structural:150+min=60 | 2825 | 116 | 76.0 | 7.3 | **7.2** |",
     "the Chroma corpora have no\n   Markdown headings"),
)  # fmt: skip

SEMANTIC_COST = Evidence(
    "semantic cuts embed every sentence while chunking: 3.90 CPU s for a 10,005-word "
    "document with fp32 MiniLM, 1.60 s in bf16",
    "bench/results/semantic.md",
    ("| fissure semantic | fp32, the default | 1.0 | 3.90 |",
     "| fissure semantic bf16 | minilm:bf16 | 0.2 | 1.60 |",
     "Document: 10,005 words"),
)  # fmt: skip

PROSE_BUDGET = Evidence(
    "on Chroma's benchmark, 150 cl100k tokens with min 60 keep IoU 7.2 against 5.9 at "
    "200, and within a 1000-token reader budget reach recall 82.6 against 80.6",
    "bench/results/eval-chroma.md",
    ("| structural:150+min=60 | 2825 | 116 | 76.0 | 7.3 | **7.2** | 38.5 | **82.6** |",
     "| structural:200 | 2192 | 150 | **78.0** | 5.9 | 5.9 | 30.0 | 80.6 |",
     "best-ranked chunks while they fit in 1000 cl100k"),
)  # fmt: skip

MODEL_LIMIT = Evidence(
    "all-MiniLM-L6-v2 reads 254 word pieces besides [CLS] and [SEP]; over 254 the model "
    "silently truncates the chunk",
    "bench/results/semantic.md",
    ("over 254 the model silently truncates the chunk",),
)

NO_OVERLAP = Evidence(
    "on Chroma's benchmark, 125-token overlap (tokentext:250:125) buys recall 81.9 with IoU "
    "3.9 and 2623 chunks, against 77.2, IoU 4.5 and 1644 chunks without (tokentext:200:0); "
    "structural cuts keep answers whole instead: one structural:200 chunk holds 74.6 % of "
    "answers, one 200-token window 63.3 %",
    "bench/results/eval-chroma.md",
    ("| tokentext:250:125 | 250 (~250) | 2623 | 81.9 ± 36.1 | 3.9 ± 3.3 |",
     "| tokentext:200:0 | 200 (~200) | 1644 | 77.2 ± 38.5 | 4.6 ± 4.0 | 21.4 ± 12.0 | 4.5 ± 4.0 |",
     "structural:200 74.6 %", "tokentext:200:0 63.3 %"),
)  # fmt: skip

RETRIEVAL_RECIPE = Evidence(
    "the best measured recipe for prose questions (semantic 140 cl100k, min 50, window 254 "
    "at share 0.8, sentence pieces of 30, dedup, headings embedded; query --sub-weight 0.4) "
    "scores recall 85.7 / IoU 9.1 and 83.3 / 7.8 on held-out halves",
    "bench/results/eval-chroma.md",
    ("**85.7 / 9.1** (odd)", "**83.3 / 7.8** (even)",
     "fissure ingest CORPUS --strategy semantic --tokenizer cl100k_base --max-tokens 140 "
     "--min-tokens 50",
     "--embed-window 254 --embed-window-share 0.8 --sub-vectors 30 --dedup --embed-headings",
     'fissure query "…" -k 5 --sub-weight 0.4'),
)  # fmt: skip

ALL = (CODE_STRUCTURE, CODE_BUDGET, PROSE_STRUCTURE, PROSE_SEMANTIC, SEMANTIC_COST,
       PROSE_BUDGET, MODEL_LIMIT, NO_OVERLAP, RETRIEVAL_RECIPE)  # fmt: skip
