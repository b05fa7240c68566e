"""The splitters that ``bench.format_peers`` times: fissure's structural path and the peers'
format-aware splitters, each built for one format and one budget.

Every builder returns ``split(item) -> list[str]`` (the chunks' texts); building loads
tokenizers, grammars and compiled patterns, so it is never timed. Peers count size through
their own length hooks: a character budget is ``len``; a MiniLM budget is the length of
all-MiniLM-L6-v2's ``tokenizer.json`` encoding without special tokens (truncation and
padding off), which is what fissure's ``tokenizer="minilm"`` counts too. A peer that needs
something this machine lacks (a package, a download) raises; the harness records the error.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIMES = {"markdown": "text/markdown", "python": "text/x-python", "html": "text/html"}
_MD_HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4")]
_HTML_HEADERS = [("h1", "h1"), ("h2", "h2"), ("h3", "h3"), ("h4", "h4")]


@dataclass(frozen=True)
class Item:
    """One input document: its name, its bytes and their UTF-8 text."""

    source: str
    data: bytes
    text: str


@dataclass(frozen=True)
class Budget:
    """A chunk budget: ``size`` characters (``kind="chars"``) or MiniLM tokens."""

    kind: str
    size: int

    @property
    def label(self) -> str:
        """How the results name it."""
        return f"{self.size} chars" if self.kind == "chars" else f"{self.size} MiniLM tokens"

    def length(self) -> Callable[[str], int]:
        """The size of a text under this budget (the peers' length hook)."""
        if self.kind == "chars":
            return len
        tok = minilm()
        return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


Split = Callable[[Item], list[str]]
Builder = Callable[[Budget], Split]


def minilm() -> Any:
    """all-MiniLM-L6-v2's tokenizer (``tokenizers``), no truncation, no padding."""
    from bench.systems import minilm_tokenizer

    return minilm_tokenizer()


# ----------------------------------------------------------------------------- fissure


def fissure(fmt: str) -> Builder:
    """fissure's structural path: ``fissure.parse.parse`` from bytes, then ``chunk_document``."""

    def build(budget: Budget) -> Split:
        chunker, parse = fissure_chunker(budget)
        mime = MIMES[fmt]
        return lambda item: [
            c.text for c in chunker.chunk_document(parse(item.data, item.source, mime))
        ]

    return build


def fissure_chunker(budget: Budget) -> tuple[Any, Callable[..., Any]]:
    """The ``Chunker`` for ``budget`` and the registry's ``parse``."""
    from fissure import Chunker
    from fissure.parse import parse

    tokenizer = "chars" if budget.kind == "chars" else "minilm"
    return Chunker(strategy="structural", max_tokens=budget.size, tokenizer=tokenizer), parse


# ----------------------------------------------------------------------------- peers


def _recursive(budget: Budget, **kw: Any) -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        chunk_size=budget.size, chunk_overlap=0, length_function=budget.length(), **kw
    )


def text_splitter_markdown(budget: Budget) -> Split:
    """semantic-text-splitter's ``MarkdownSplitter`` (Rust, pulldown-cmark)."""
    from semantic_text_splitter import MarkdownSplitter

    if budget.kind == "chars":
        splitter = MarkdownSplitter(budget.size)
    else:
        splitter = MarkdownSplitter.from_huggingface_tokenizer(minilm(), budget.size)
    return lambda item: list(splitter.chunks(item.text))


def text_splitter_code(budget: Budget) -> Split:
    """semantic-text-splitter's ``CodeSplitter`` with the tree-sitter-python grammar."""
    import tree_sitter_python
    from semantic_text_splitter import CodeSplitter

    language = tree_sitter_python.language()
    if budget.kind == "chars":
        splitter = CodeSplitter(language, budget.size)
    else:
        splitter = CodeSplitter.from_huggingface_tokenizer(language, minilm(), budget.size)
    return lambda item: list(splitter.chunks(item.text))


def langchain_markdown_headers(budget: Budget) -> Split:
    """LangChain ``MarkdownHeaderTextSplitter`` (headers kept) + recursive on each section."""
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    headers = MarkdownHeaderTextSplitter(_MD_HEADERS, strip_headers=False)
    recursive = _recursive(budget)
    return lambda item: [
        d.page_content for d in recursive.split_documents(headers.split_text(item.text))
    ]


def langchain_markdown_syntax(budget: Budget) -> Split:
    """LangChain ``ExperimentalMarkdownSyntaxTextSplitter`` (headers kept) + recursive."""
    from langchain_text_splitters import ExperimentalMarkdownSyntaxTextSplitter

    recursive = _recursive(budget)

    def split(item: Item) -> list[str]:
        # The splitter keeps state across calls; a fresh one per document, as its docs show.
        sections = ExperimentalMarkdownSyntaxTextSplitter(_MD_HEADERS, strip_headers=False)
        return [d.page_content for d in recursive.split_documents(sections.split_text(item.text))]

    return split


def _llama_tokenizer(budget: Budget) -> Callable[[str], list[Any]]:
    if budget.kind == "chars":
        return list
    tok = minilm()
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def llama_markdown(budget: Budget) -> Split:
    """LlamaIndex ``MarkdownNodeParser`` (sections) + ``SentenceSplitter`` to the budget."""
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    sections = MarkdownNodeParser(include_metadata=False, include_prev_next_rel=False)
    sentences = SentenceSplitter(
        chunk_size=budget.size,
        chunk_overlap=0,
        tokenizer=_llama_tokenizer(budget),
        include_metadata=False,
        include_prev_next_rel=False,
    )

    def split(item: Item) -> list[str]:
        nodes = sections.get_nodes_from_documents([Document(text=item.text)])
        return [n.get_content() for n in sentences.get_nodes_from_documents(nodes)]  # type: ignore[arg-type]

    return split


def llama_code(budget: Budget) -> Split:
    """LlamaIndex ``CodeSplitter`` on a local tree-sitter-python parser (max_chars or
    max_tokens as the budget; its line-window defaults kept)."""
    import tree_sitter
    import tree_sitter_python
    from llama_index.core import Document
    from llama_index.core.node_parser import CodeSplitter

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    if budget.kind == "chars":
        kw: dict[str, Any] = {"max_chars": budget.size, "count_mode": "char"}
    else:
        kw = {
            "max_tokens": budget.size,
            "count_mode": "token",
            "tokenizer": _llama_tokenizer(budget),
        }
    splitter = CodeSplitter(
        language="python", parser=parser, include_metadata=False, include_prev_next_rel=False, **kw
    )
    return lambda item: [
        n.get_content() for n in splitter.get_nodes_from_documents([Document(text=item.text)])
    ]


def chonkie_code(budget: Budget) -> Split:
    """Chonkie ``CodeChunker`` (needs tree-sitter-language-pack, which downloads grammars)."""
    import chonkie

    tokenizer: Any = "character" if budget.kind == "chars" else minilm()
    chunker = chonkie.CodeChunker(tokenizer=tokenizer, chunk_size=budget.size, language="python")
    return lambda item: [c.text for c in chunker.chunk(item.text)]


def langchain_html_headers(budget: Budget) -> Split:
    """LangChain ``HTMLHeaderTextSplitter`` (text per header section) + recursive."""
    from langchain_text_splitters import HTMLHeaderTextSplitter

    headers = HTMLHeaderTextSplitter(_HTML_HEADERS)
    recursive = _recursive(budget)
    return lambda item: [
        d.page_content for d in recursive.split_documents(headers.split_text(item.text))
    ]


def langchain_html_sections(budget: Budget) -> Split:
    """LangChain ``HTMLSectionSplitter`` (lxml XSLT + bs4; its own recursive pass)."""
    from langchain_text_splitters import HTMLSectionSplitter

    splitter = HTMLSectionSplitter(
        _HTML_HEADERS, chunk_size=budget.size, chunk_overlap=0, length_function=budget.length()
    )
    return lambda item: [d.page_content for d in splitter.split_text(item.text)]


def langchain_html_semantic(budget: Budget) -> Split:
    """LangChain ``HTMLSemanticPreservingSplitter`` (bs4); it has no length hook, so it
    runs at the character budget only."""
    from langchain_text_splitters import HTMLSemanticPreservingSplitter

    if budget.kind != "chars":
        raise NotImplementedError("no length hook: max_chunk_size counts characters only")
    splitter = HTMLSemanticPreservingSplitter(
        _HTML_HEADERS, max_chunk_size=budget.size, chunk_overlap=0
    )
    return lambda item: [d.page_content for d in splitter.split_text(item.text)]


PEERS: dict[str, list[tuple[str, Builder]]] = {
    "markdown": [
        ("semantic-text-splitter MarkdownSplitter", text_splitter_markdown),
        ("LangChain MarkdownHeaderTextSplitter + recursive", langchain_markdown_headers),
        ("LangChain ExperimentalMarkdownSyntaxTextSplitter + recursive", langchain_markdown_syntax),
        ("LlamaIndex MarkdownNodeParser + SentenceSplitter", llama_markdown),
    ],
    "python": [
        ("semantic-text-splitter CodeSplitter (tree-sitter-python)", text_splitter_code),
        ("LlamaIndex CodeSplitter (tree-sitter-python)", llama_code),
        ("Chonkie CodeChunker", chonkie_code),
    ],
    "html": [
        ("LangChain HTMLHeaderTextSplitter + recursive", langchain_html_headers),
        ("LangChain HTMLSectionSplitter", langchain_html_sections),
        ("LangChain HTMLSemanticPreservingSplitter", langchain_html_semantic),
    ],
}


# ----------------------------------------------------------------------------- parsers alone


def _markdown_it_py(item: Item) -> Any:
    from fissure.parse.markdown import _block_parser

    return _block_parser().parse(item.text)


def _pyromark(item: Item) -> Any:
    import pyromark

    # The call is lazy: walk every event, with the options fissure parses with, without
    # keeping them (a list of a document's events holds ~10 objects per event alive, and
    # the collector's passes over them cost several times the events themselves).
    events = pyromark.events_with_range(item.text, options=pyromark.Options.ENABLE_TABLES)
    return deque(events, maxlen=0)


def _ast(item: Item) -> Any:
    import ast

    return ast.parse(item.data)


def _lexbor(item: Item) -> Any:
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(item.text).root


# The libraries under fissure's parsers, alone: the ceiling fissure's parse time is read
# against ("the parser's own limit").
LIBRARIES: dict[str, list[tuple[str, Callable[[Item], Any]]]] = {
    "markdown": [
        ("markdown-it-py, block rules only", _markdown_it_py),
        ("pyromark events_with_range", _pyromark),
    ],
    "python": [("ast.parse", _ast)],
    "html": [("selectolax LexborHTMLParser", _lexbor)],
}
