"""The tree-sitter code parser: entities, qualified names, leading comments, exact offsets."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tree_checks import assert_valid_tree, walk

from fissure.errors import InputError, MissingDependencyError
from fissure.parse import code
from fissure.types import Block, Document

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "code"


def assert_tree(doc: Document) -> None:
    """A valid tree whose every span is non-empty and trimmed."""
    assert_valid_tree(doc)
    for block in walk(doc.blocks):
        assert not doc.text[block.start].isspace(), block
        assert not doc.text[block.end - 1].isspace(), block


def entities(doc: Document) -> dict[str, Block]:
    """Blocks by qualified name; the first wins (a Rust struct before its ``impl``)."""
    found: dict[str, Block] = {}
    for block in walk(doc.blocks):
        if "entity" in block.metadata:
            found.setdefault(block.metadata["entity"], block)
    return found


def parse_file(name: str, mime: str) -> Document:
    text = (CORPUS / name).read_text(encoding="utf-8")
    doc = code.parse(text, source=name, mime=mime)
    assert doc.text == text
    assert_tree(doc)
    return doc


# file, MIME, {qualified name: kind}, {qualified name: how its block starts}
SAMPLES = [
    (
        "server.js",
        "text/x-javascript",
        {
            "Server": "class",
            "Server.constructor": "method",
            "Server.route": "method",
            "Server.handle": "method",
            "greet": "function",
            "main": "function",
        },
        {
            "Server": "/**\n * A tiny request router.",
            "Server.route": "// Register a handler",
            "greet": "/** Format a greeting — with a naïve accent. */\nexport const greet",
        },
    ),
    (
        "shapes.ts",
        "text/x-typescript",
        {
            "Shape": "interface",
            "Shape.area": "method",
            "Colour": "enum",
            "Circle": "class",
            "Circle.area": "method",
            "Geometry": "namespace",
            "Geometry.distance": "function",
            "largest": "function",
        },
        {
            "Circle": "// A circle centred on a point.\n@sealed\nexport class Circle",
            "Circle.area": "/** Area in square units. */\n  @memoize\n  area()",
        },
    ),
    (
        "widget.tsx",
        "text/x-tsx",
        {"Counter": "function", "Panel": "class", "Panel.render": "method"},
        {"Counter": "/** A button that counts its clicks. */"},
    ),
    (
        "server.go",
        "text/x-go",
        {
            "Server": "struct",
            "Handler": "interface",
            "Server.Handle": "method",
            "NewServer": "function",
        },
        {
            "Server": "// Server answers HTTP requests.\ntype Server struct",
            "Server.Handle": "// Handle writes a greeting — in français.\nfunc (s *Server)",
        },
    ),
    (
        "lib.rs",
        "text/x-rust",
        {
            "Cache": "struct",
            "Evict": "trait",
            "Evict.evict": "method",
            "Cache.new": "method",
            "Cache.get": "method",
            "Cache.fmt": "method",
            "Größe": "enum",
            "util": "module",
            "util.hash": "function",
        },
        {
            "Cache": "/// A key-value cache.\n#[derive(Debug, Default)]\npub struct Cache",
            "Cache.new": "/// Make an empty cache.\n    pub fn new()",
        },
    ),
    (
        "Repository.java",
        "text/x-java",
        {
            "Repository": "class",
            "Repository.Repository": "method",
            "Repository.add": "method",
            "Repository.size": "method",
            "Repository.Entry": "class",
            "Repository.Entry.describe": "method",
            "Store": "interface",
            "Store.clear": "method",
            "Mode": "enum",
        },
        {
            "Repository": "/**\n * Stores items in memory.\n */\npublic class",
            "Repository.add": "/** Add one item. */\n    @Override\n    public void add",
        },
    ),
    (
        "buffer.c",
        "text/x-c",
        {
            "Buffer": "struct",
            "node": "struct",
            "buffer_append": "function",
            "buffer_free": "function",
            "main": "function",
        },
        {
            "Buffer": "/* A growable byte buffer. */\ntypedef struct",
            "buffer_append": "/* Append bytes to a buffer — naïvely. */\nint buffer_append",
        },
    ),
    (
        "matrix.cpp",
        "text/x-c++",
        {
            "linalg": "namespace",
            "linalg.Matrix": "class",
            "linalg.Matrix.Matrix": "method",
            "linalg.Matrix.at": "method",
            "linalg.Matrix.rows": "method",
            "linalg.square": "function",
            "main": "function",
        },
        {
            "linalg.Matrix": "// A dense row-major matrix.\nclass Matrix",
            "linalg.square": "template <typename T>\nT square",
        },
    ),
    (
        "account.rb",
        "text/x-ruby",
        {
            "Bank": "module",
            "Bank.Account": "class",
            "Bank.Account.initialize": "method",
            "Bank.Account.deposit": "method",
            "Bank.Account.open": "method",
            "report": "function",
        },
        {
            "Bank": "# Banking helpers.\nmodule Bank",
            "Bank.Account": "# An account with a balance — in €.\n  class Account",
            "Bank.Account.deposit": "# Add money.\n    def deposit",
        },
    ),
    (
        "Cart.php",
        "text/x-php",
        {
            "Cart": "class",
            "Cart.add": "method",
            "Cart.total": "method",
            "Checkout": "interface",
            "Checkout.pay": "method",
            "format_price": "function",
        },
        {
            "Cart": "/**\n * A shopping cart.\n */\n#[Entity]\nclass Cart",
            "format_price": "// Format a price in euros — €.\nfunction",
        },
    ),
    (
        "deploy.sh",
        "text/x-sh",
        {"build": "function", "upload": "function"},
        {"upload": "# Upload to the server — « prod ».\nfunction upload"},
    ),
    (
        "Greeter.cs",
        "text/x-csharp",
        {
            "Demo.Greetings": "namespace",
            "Demo.Greetings.Greeter": "class",
            "Demo.Greetings.Greeter.Greeter": "method",
            "Demo.Greetings.Greeter.Greet": "method",
            "Demo.Greetings.IGreeter": "interface",
            "Demo.Greetings.Point": "struct",
            "Demo.Greetings.Tone": "enum",
        },
        {
            "Demo.Greetings.Greeter": "/// <summary>Says hello.</summary>\n    [Serializable]",
            "Demo.Greetings.Greeter.Greet": "/// <summary>Build the greeting — ¡hola!</summary>",
        },
    ),
]


@pytest.mark.parametrize(("name", "mime", "kinds", "starts"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_entities_qualified_names_and_leading_comments(
    name: str, mime: str, kinds: dict[str, str], starts: dict[str, str]
) -> None:
    doc = parse_file(name, mime)
    found = entities(doc)
    assert {qualified: found[qualified].kind for qualified in kinds if qualified in found} == kinds
    for qualified, prefix in starts.items():
        block = found[qualified]
        assert doc.text[block.start : block.end].startswith(prefix)
    for qualified, block in found.items():
        assert block.title == qualified.rsplit(".", 1)[-1] or "." in (block.title or "")
    assert doc.metadata["syntax_errors"] is False


@pytest.mark.parametrize(("name", "mime"), [(s[0], s[1]) for s in SAMPLES])
def test_one_imports_block_per_group(name: str, mime: str) -> None:
    doc = parse_file(name, mime)
    imports = [b for b in walk(doc.blocks) if b.kind == "imports"]
    if name in ("deploy.sh", "widget.tsx"):
        assert len(imports) <= 1
        return
    assert len(imports) == 1
    first_line = doc.text[imports[0].start :].split("\n", 1)[0]
    assert first_line.split()[0] in ("import", "use", "#include", "require", "using")


def test_nested_entities_are_children() -> None:
    doc = parse_file("Repository.java", "text/x-java")
    (repository,) = [b for b in doc.blocks if b.title == "Repository"]
    assert [c.title for c in repository.children] == ["Repository", "add", "size", "Entry"]
    assert [c.title for c in repository.children[3].children] == ["describe"]


def test_entity_source_is_exact() -> None:
    doc = parse_file("lib.rs", "text/x-rust")
    found = entities(doc)
    assert doc.text[found["Cache.get"].start : found["Cache.get"].end] == (
        "pub fn get(&self, key: &str) -> Option<&String> {\n        self.items.get(key)\n    }"
    )
    impl = [b for b in doc.blocks if b.kind == "impl"]
    assert [b.metadata.get("trait") for b in impl] == [None, "fmt::Display"]


def test_non_ascii_offsets_are_characters() -> None:
    text = (
        "// 日本語のコメント — ünïcödé\n"
        "const grüße = 1;\n"
        "\n"
        "/** Straße 🚲 */\n"
        "class Straße {\n"
        "  // 🚀 fast\n"
        "  fahren(ß) { return 'café'; }\n"
        "}\n"
        "function ñandú() { return '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'; }\n"
    )
    doc = code.parse(text, source="x.js", mime="text/x-javascript")
    assert_tree(doc)
    found = entities(doc)
    assert doc.text[found["Straße"].start :].startswith("/** Straße 🚲 */\nclass Straße {")
    assert doc.text[found["Straße"].end - 1] == "}"
    method = found["Straße.fahren"]
    assert doc.text[method.start : method.end] == "// 🚀 fast\n  fahren(ß) { return 'café'; }"
    function = found["ñandú"]
    assert doc.text[function.start : function.end] == "function ñandú() { return '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'; }"


def test_blank_line_and_trailing_comments_do_not_attach() -> None:
    text = "// licence header\n\nfn a() {} // trailing note\nfn b() {}\n"
    doc = code.parse(text, source="x.rs", mime="text/x-rust")
    found = entities(doc)
    assert doc.text[found["a"].start :].startswith("fn a()")
    assert doc.text[found["b"].start :].startswith("fn b()")


def test_syntax_errors_still_yield_entities() -> None:
    text = (
        "package main\n\n"
        "// Good is fine.\n"
        "func Good() int { return 1 }\n\n"
        "func Broken( {\n"
        "  if x := ; {\n"
        "}\n\n"
        "// Later survives too.\n"
        "func Later() {}\n"
    )
    doc = code.parse(text, source="broken.go", mime="text/x-go")
    assert doc.metadata["syntax_errors"] is True
    assert_tree(doc)
    found = entities(doc)
    assert "Good" in found
    assert doc.text[found["Good"].start :].startswith("// Good is fine.")


def test_garbage_and_empty_input_do_not_crash() -> None:
    for text in ("", "\x00\x01\x02 }{)(", "class {{{{ ;;; fn (((", "\ud800 lone surrogate"):
        for mime in ("text/x-javascript", "text/x-c++", "text/x-rust", "text/x-ruby"):
            doc = code.parse(text, source="junk", mime=mime)
            assert doc.text == text
            assert_tree(doc)


def test_deep_nesting_is_capped_not_recursive() -> None:
    text = "function f() {\n" * 3000 + "}\n" * 3000
    doc = code.parse(text, source="deep.js", mime="text/x-javascript")
    depth, blocks = 0, doc.blocks
    while blocks:
        depth, blocks = depth + 1, blocks[0].children
    assert 1 < depth <= 32


def test_large_non_ascii_file_is_fast() -> None:
    unit = (CORPUS / "lib.rs").read_text(encoding="utf-8")
    text = unit * 300  # ~300 KB, every copy with non-ASCII identifiers
    started = time.perf_counter()
    doc = code.parse(text, source="big.rs", mime="text/x-rust")
    elapsed = time.perf_counter() - started
    last = [b for b in doc.blocks if b.title == "Größe"][-1]
    assert doc.text[last.start :].startswith("pub enum Größe {")
    assert elapsed < 5, elapsed  # generous: a linear pass takes well under a second


def test_unknown_mime_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="no code parser for MIME type 'text/x-cobol'"):
        code.parse("IDENTIFICATION DIVISION.", source="a.cob", mime="text/x-cobol")


def test_every_advertised_mime_has_a_language() -> None:
    assert {"text/x-javascript", "text/x-c++", "text/x-csharp", "text/x-sh"} <= set(
        code.SUPPORTED_MIMES
    )
    for mime in code.SUPPORTED_MIMES:
        assert code.language_for(mime)


def test_levels_rank_containers_above_members() -> None:
    doc = parse_file("matrix.cpp", "text/x-c++")
    found = entities(doc)
    assert found["linalg"].level == code.CodeLevel.NAMESPACE
    assert found["linalg.Matrix"].level == code.CodeLevel.TYPE
    assert found["linalg.square"].level == code.CodeLevel.FUNCTION
    assert found["linalg.Matrix.at"].level == code.CodeLevel.METHOD
    assert code.CodeLevel.NAMESPACE < code.CodeLevel.TYPE < code.CodeLevel.METHOD


def test_python_fallback_needs_its_grammar() -> None:
    text = "import os\n\n# Say hi.\n@cache\ndef hi(:\n    pass\n\nclass A:\n    def m(self): ...\n"
    try:
        import tree_sitter_python  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="pip install tree-sitter-python"):
            code.parse(text, source="x.py", mime="text/x-python")
        return
    doc = code.parse(text, source="x.py", mime="text/x-python")
    assert doc.metadata["syntax_errors"] is True
    assert "A.m" in entities(doc)
