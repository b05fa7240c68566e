"""Hooks for the syntax nodes whose entity name is not simply their ``name`` field.

C hides a function's name inside nested declarators, Go names a method's owner in its
receiver, a Rust ``impl`` names a type rather than itself, and JavaScript functions are
often anonymous values bound to a variable. Each hook turns one such node into an
:class:`Entity` (or ``None`` when the node declares nothing worth a block).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

Node = Any  # tree_sitter.Node; typed loosely so this module imports without tree-sitter


class Entity(NamedTuple):
    """What a hook found: an entity's kind, its name and the node whose span it takes."""

    kind: str
    name: str
    outer: Node
    qualifier: str | None = None  # owner named at the definition (Go receiver, C++ ``A::f``)
    metadata: Mapping[str, Any] | None = None


Hook = Callable[[Node], "Entity | None"]


# --- helpers shared by the hooks -------------------------------------------------------


def _text(node: Node | None) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", "replace")


def field_text(node: Node, name: str) -> str:
    return _text(node.child_by_field_name(name))


_NAME_CUT = re.compile(r"[<\[(\s]")


def clean_name(name: str) -> str:
    """``A::B`` → ``A.B``, ``App\\Shop`` → ``App.Shop``, quotes dropped."""
    name = name.strip().strip("\"'`")
    return name.replace("::", ".").replace("\\", ".").strip(".")


def type_name(node: Node | None) -> str:
    """The bare type in a type expression: ``*S[T]`` → ``S``, ``a::Foo<T>`` → ``Foo``."""
    raw = _NAME_CUT.split(_text(node).lstrip("*&( "), maxsplit=1)[0]
    return re.split(r"::|\.", raw)[-1].strip("*& ")


def _outer(node: Node, *types: str) -> Node:
    parent = node.parent
    return parent if parent is not None and parent.type in types else node


# --- C and C++ ---------------------------------------------------------------------------

_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
    }
)


def c_function(node: Node) -> Entity | None:
    """``int *Foo::bar(int)`` → ``bar`` qualified by ``Foo``; only real definitions."""
    declarator = node.child_by_field_name("declarator")
    seen_function = False
    while declarator is not None and declarator.type not in _NAME_TYPES:
        seen_function = seen_function or declarator.type == "function_declarator"
        inner = declarator.child_by_field_name("declarator")
        if inner is None and declarator.named_child_count:  # ``&f()`` has no field name
            inner = declarator.named_children[-1]
        declarator = inner
    if declarator is None or not seen_function:
        return None
    parts = _text(declarator).split("::")
    qualifier = ".".join(p.strip() for p in parts[:-1]) or None
    kind = "method" if qualifier else "function"
    return Entity(kind, parts[-1].strip(), node, qualifier)


def c_type(kind: str) -> Hook:
    def hook(node: Node) -> Entity | None:
        if node.child_by_field_name("body") is None:
            return None  # a use such as ``struct foo *p``, not a definition
        outer = _outer(node, "type_definition", "declaration")
        name = field_text(node, "name")
        if not name and outer.type == "type_definition":
            name = field_text(outer, "declarator")
        return Entity(kind, clean_name(name), outer) if name else None

    return hook


# --- Go -------------------------------------------------------------------------------


def go_type(node: Node) -> Entity | None:
    kinds = {"struct_type": "struct", "interface_type": "interface"}
    kind = kinds.get(getattr(node.child_by_field_name("type"), "type", ""))
    name = field_text(node, "name")
    if kind is None or not name:
        return None
    parent = node.parent
    single = (
        parent is not None and parent.type == "type_declaration" and (parent.named_child_count == 1)
    )
    return Entity(kind, name, parent if single else node)


def go_method(node: Node) -> Entity | None:
    receiver = node.child_by_field_name("receiver")
    params = [c for c in getattr(receiver, "named_children", ()) if c.type.endswith("declaration")]
    owner = type_name(params[0].child_by_field_name("type")) if params else ""
    return Entity("method", field_text(node, "name"), node, owner or None)


# --- Rust -------------------------------------------------------------------------------


def rust_impl(node: Node) -> Entity | None:
    name = type_name(node.child_by_field_name("type"))
    trait = node.child_by_field_name("trait")
    meta = {"trait": _text(trait)} if trait is not None else None
    return Entity("impl", name, node, metadata=meta) if name else None


def rust_mod(node: Node) -> Entity | None:
    if node.child_by_field_name("body") is None:
        return None  # ``mod foo;`` only points at another file
    return Entity("module", field_text(node, "name"), node)


# --- JavaScript and TypeScript -------------------------------------------------------------

_JS_FUNCTIONS = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


def js_variable(node: Node) -> Entity | None:
    """``const f = () => …`` is a function named ``f``; one declarator only."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    value = declarators[0].child_by_field_name("value")
    if value is None or value.type not in _JS_FUNCTIONS:
        return None
    return Entity("function", field_text(declarators[0], "name"), node)


def js_field(node: Node) -> Entity | None:
    """A class field holding a function (``handle = () => …``) is a method."""
    value = node.child_by_field_name("value")
    if value is None or value.type not in _JS_FUNCTIONS:
        return None
    name = field_text(node, "name") or field_text(node, "property")
    return Entity("method", name, node) if name else None


# ``const x = require("x")``: a CommonJS import.
JS_REQUIRE = """
([(lexical_declaration (variable_declarator value: (call_expression function: (identifier) @_f)))
  (variable_declaration (variable_declarator value: (call_expression function: (identifier) @_f)))]
  @import (#eq? @_f "require"))
"""


def ts_module(node: Node) -> Entity | None:
    name = field_text(node, "name")
    return Entity("namespace", clean_name(name), node) if name else None


# --- Ruby, PHP, shell, C# --------------------------------------------------------------------


def ruby_singleton(node: Node) -> Entity | None:
    return Entity("method", field_text(node, "name"), node)


RUBY_REQUIRE = """
((call method: (identifier) @_m) @import (#any-of? @_m "require" "require_relative" "load"))
"""
SHELL_SOURCE = """
((command name: (command_name) @_n) @import (#any-of? @_n "source" "."))
"""


def with_body(kind: str) -> Hook:
    """A namespace with a body; ``namespace X;`` only names the rest of the file."""

    def hook(node: Node) -> Entity | None:
        name = field_text(node, "name")
        if node.child_by_field_name("body") is None or not name:
            return None
        return Entity(kind, clean_name(name), node)

    return hook
