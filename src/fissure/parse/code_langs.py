"""Per-language tables for the tree-sitter code parser.

Each :class:`LangSpec` says which syntax nodes are entities (and what kind), which are
imports, and which wrap a declaration without changing what it is (``export``,
``template <…>``, Python decorators). The few languages whose names hide in odd places
(C declarators, Go receivers, Rust ``impl`` blocks, JavaScript arrow functions) get hooks
from :mod:`fissure.parse.code_hooks`. :mod:`fissure.parse.code` does the walking; this
module only knows grammars.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fissure.errors import MissingDependencyError
from fissure.parse.code_hooks import (
    JS_REQUIRE,
    RUBY_REQUIRE,
    SHELL_SOURCE,
    Entity,
    Hook,
    Node,
    c_function,
    c_type,
    clean_name,
    field_text,
    go_method,
    go_type,
    js_field,
    js_variable,
    ruby_singleton,
    rust_impl,
    rust_mod,
    ts_module,
    with_body,
)

# Comments of every supported grammar; they attach to the entity right below them.
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Decorator-like nodes that sit beside (not inside) the entity they annotate.
ATTRIBUTE_TYPES = frozenset({"decorator", "attribute_item"})


@dataclass(frozen=True)
class LangSpec:
    """How to find entities and imports in one tree-sitter grammar.

    Attributes:
        name: Language name recorded in ``Document.metadata["language"]``.
        module: Python module of the grammar wheel.
        function: Function of that module returning the language pointer.
        pip: The pip name of the grammar wheel, for the error when it is missing.
        entities: Node type → block kind, for nodes whose ``name`` field is the title.
        hooks: Node type → function for nodes that need more than a ``name`` field.
        imports: Node types that are imports (``use``, ``#include`` …).
        import_query: Extra tree-sitter query patterns capturing ``@import`` for imports
            that are ordinary calls (``require``, ``source``).
        wrappers: Node types that wrap one declaration and belong to its span.
    """

    name: str
    module: str
    function: str
    pip: str
    entities: Mapping[str, str] = field(default_factory=dict)
    hooks: Mapping[str, Hook] = field(default_factory=dict)
    imports: frozenset[str] = frozenset()
    import_query: str = ""
    wrappers: frozenset[str] = frozenset()

    @property
    def entity_types(self) -> frozenset[str]:
        """Every node type that may be an entity."""
        return frozenset(self.entities) | frozenset(self.hooks)

    def entity(self, node: Node) -> Entity | None:
        """The entity ``node`` declares, or ``None`` when it declares none."""
        hook = self.hooks.get(node.type)
        if hook is not None:
            return hook(node)
        name = field_text(node, "name")
        if not name:
            return None
        return Entity(self.entities[node.type], clean_name(name), node)


_LOADED: dict[str, tuple[Any, Any]] = {}


def load_language(spec: LangSpec) -> tuple[Any, Any]:
    """The ``tree_sitter.Language`` of ``spec`` and its query, built once per process.

    The query captures ``@prefix`` (comments, decorators), ``@entity`` (candidate
    entities), ``@import`` and ``@wrapper`` nodes, so the syntax tree is searched in C rather than
    walked node by node in Python.

    Raises:
        MissingDependencyError: The grammar wheel is not installed.
    """
    loaded = _LOADED.get(spec.name)
    if loaded is None:
        loaded = _LOADED[spec.name] = _load(spec)
    return loaded


def _load(spec: LangSpec) -> tuple[Any, Any]:
    import tree_sitter

    try:
        grammar = importlib.import_module(spec.module)
    except ImportError as exc:
        raise MissingDependencyError(spec.pip, purpose=f"parsing {spec.name} code") from exc
    language = tree_sitter.Language(getattr(grammar, spec.function)())

    def alternation(types: frozenset[str], capture: str) -> str:
        # Tables name a few node types that only some versions of a grammar have.
        known = sorted(t for t in types if language.id_for_node_kind(t, True) is not None)
        return f"[{' '.join(f'({t})' for t in known)}] @{capture}" if known else ""

    patterns = [
        alternation(COMMENT_TYPES | ATTRIBUTE_TYPES, "prefix"),
        alternation(spec.entity_types, "entity"),
        alternation(spec.imports, "import"),
        alternation(spec.wrappers, "wrapper"),
        spec.import_query,
    ]
    return language, tree_sitter.Query(language, "\n".join(p for p in patterns if p))


# --- the table -------------------------------------------------------------------------------

_JS_ENTITIES = {
    "class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
}
_JS_HOOKS: dict[str, Hook] = {
    "lexical_declaration": js_variable,
    "variable_declaration": js_variable,
    "field_definition": js_field,
}
_TS_ENTITIES = _JS_ENTITIES | {
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "method_signature": "method",
    "abstract_method_signature": "method",
    "function_signature": "function",
}
_TS_HOOKS = _JS_HOOKS | {
    "public_field_definition": js_field,
    "internal_module": ts_module,
    "module": ts_module,
}
_JS_IMPORTS = frozenset({"import_statement"})
_JS_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})

_C_HOOKS: dict[str, Hook] = {
    "function_definition": c_function,
    "struct_specifier": c_type("struct"),
    "union_specifier": c_type("struct"),
    "enum_specifier": c_type("enum"),
}
_CPP_HOOKS = _C_HOOKS | {
    "class_specifier": c_type("class"),
    "namespace_definition": with_body("namespace"),
}

_JAVA_ENTITIES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "annotation_type_declaration": "interface",
    "method_declaration": "method",
    "constructor_declaration": "method",
    "compact_constructor_declaration": "method",
}

_CSHARP_ENTITIES = {
    "class_declaration": "class",
    "struct_declaration": "struct",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "method_declaration": "method",
    "constructor_declaration": "method",
    "destructor_declaration": "method",
    "local_function_statement": "function",
}


def _spec(name: str, module: str, pip: str, function: str = "language", **kw: Any) -> LangSpec:
    return LangSpec(name=name, module=module, function=function, pip=pip, **kw)


LANGUAGES: dict[str, LangSpec] = {
    "javascript": _spec(
        "javascript",
        "tree_sitter_javascript",
        "tree-sitter-javascript",
        entities=_JS_ENTITIES,
        hooks=_JS_HOOKS,
        imports=_JS_IMPORTS,
        import_query=JS_REQUIRE,
        wrappers=_JS_WRAPPERS,
    ),
    "typescript": _spec(
        "typescript",
        "tree_sitter_typescript",
        "tree-sitter-typescript",
        function="language_typescript",
        entities=_TS_ENTITIES,
        hooks=_TS_HOOKS,
        imports=_JS_IMPORTS,
        import_query=JS_REQUIRE,
        wrappers=_JS_WRAPPERS,
    ),
    "tsx": _spec(
        "tsx",
        "tree_sitter_typescript",
        "tree-sitter-typescript",
        function="language_tsx",
        entities=_TS_ENTITIES,
        hooks=_TS_HOOKS,
        imports=_JS_IMPORTS,
        import_query=JS_REQUIRE,
        wrappers=_JS_WRAPPERS,
    ),
    "go": _spec(
        "go",
        "tree_sitter_go",
        "tree-sitter-go",
        entities={"function_declaration": "function"},
        hooks={"type_spec": go_type, "method_declaration": go_method},
        imports=frozenset({"import_declaration"}),
    ),
    "rust": _spec(
        "rust",
        "tree_sitter_rust",
        "tree-sitter-rust",
        entities={
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "function_item": "function",
            "function_signature_item": "function",
            "macro_definition": "function",
        },
        hooks={"impl_item": rust_impl, "mod_item": rust_mod},
        imports=frozenset({"use_declaration", "extern_crate_declaration"}),
    ),
    "java": _spec(
        "java",
        "tree_sitter_java",
        "tree-sitter-java",
        entities=_JAVA_ENTITIES,
        imports=frozenset({"import_declaration"}),
    ),
    "c": _spec(
        "c",
        "tree_sitter_c",
        "tree-sitter-c",
        hooks=_C_HOOKS,
        imports=frozenset({"preproc_include"}),
    ),
    "cpp": _spec(
        "cpp",
        "tree_sitter_cpp",
        "tree-sitter-cpp",
        hooks=_CPP_HOOKS,
        imports=frozenset({"preproc_include", "using_declaration"}),
        wrappers=frozenset({"template_declaration"}),
    ),
    "ruby": _spec(
        "ruby",
        "tree_sitter_ruby",
        "tree-sitter-ruby",
        entities={"class": "class", "module": "module", "method": "function"},
        hooks={"singleton_method": ruby_singleton},
        import_query=RUBY_REQUIRE,
    ),
    "php": _spec(
        "php",
        "tree_sitter_php",
        "tree-sitter-php",
        function="language_php",
        entities={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "function_definition": "function",
            "method_declaration": "method",
        },
        hooks={"namespace_definition": with_body("namespace")},
        imports=frozenset({"namespace_use_declaration"}),
    ),
    "bash": _spec(
        "bash",
        "tree_sitter_bash",
        "tree-sitter-bash",
        entities={"function_definition": "function"},
        import_query=SHELL_SOURCE,
    ),
    "csharp": _spec(
        "csharp",
        "tree_sitter_c_sharp",
        "tree-sitter-c-sharp",
        entities=_CSHARP_ENTITIES,
        hooks={"namespace_declaration": with_body("namespace")},
        imports=frozenset({"using_directive"}),
    ),
    "python": _spec(
        "python",
        "tree_sitter_python",
        "tree-sitter-python",
        entities={"class_definition": "class", "function_definition": "function"},
        imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
        wrappers=frozenset({"decorated_definition"}),
    ),
}

# MIME type → language. The first name of each language is the one fissure's detector emits.
MIME_LANGUAGES: dict[str, str] = {
    "text/x-javascript": "javascript",
    "text/javascript": "javascript",
    "application/javascript": "javascript",
    "text/x-typescript": "typescript",
    "application/typescript": "typescript",
    "text/x-tsx": "tsx",
    "text/x-go": "go",
    "text/x-rust": "rust",
    "text/x-java": "java",
    "text/x-c": "c",
    "text/x-c++": "cpp",
    "text/x-ruby": "ruby",
    "text/x-php": "php",
    "text/x-sh": "bash",
    "application/x-sh": "bash",
    "text/x-csharp": "csharp",
    "text/x-python": "python",
}
