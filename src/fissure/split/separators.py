"""Separator hierarchies for the ``recursive`` strategy.

The default is the classic ``["\\n\\n", "\\n", " ", ""]``. Language presets put the
language's own top-level constructs first. Presets are regular expressions; a
separator stays with the text that follows it. The empty separator (characters) is
always implied last, because no chunk may exceed the budget.
"""

from __future__ import annotations

import re

from fissure.errors import ConfigError

DEFAULT = ("\n\n", "\n", " ", "")


def _lines(*keywords: str) -> tuple[str, ...]:
    """A separator per keyword at the start of a line, then the generic tail."""
    return (*(r"\n" + re.escape(k) for k in keywords), r"\n\n", r"\n", r" ")


PRESETS: dict[str, tuple[str, ...]] = {
    "python": _lines("class ", "def ", "\tdef ", "    def ", "async def ", "    async def "),
    "js": _lines(
        "function ",
        "const ",
        "let ",
        "var ",
        "class ",
        "export ",
        "if ",
        "for ",
        "while ",
        "switch ",
        "case ",
        "default ",
    ),
    "ts": _lines(
        "enum ",
        "interface ",
        "namespace ",
        "type ",
        "class ",
        "function ",
        "const ",
        "let ",
        "var ",
        "export ",
        "if ",
        "for ",
        "while ",
        "switch ",
        "case ",
        "default ",
    ),
    "go": _lines("func ", "var ", "const ", "type ", "if ", "for ", "switch ", "case "),
    "rust": _lines(
        "fn ",
        "pub fn ",
        "impl ",
        "struct ",
        "pub struct ",
        "enum ",
        "trait ",
        "mod ",
        "const ",
        "let ",
        "if ",
        "while ",
        "for ",
        "loop ",
        "match ",
    ),
    "java": _lines(
        "class ",
        "interface ",
        "enum ",
        "public ",
        "protected ",
        "private ",
        "static ",
        "if ",
        "for ",
        "while ",
        "switch ",
        "case ",
    ),
    "c": _lines(
        "struct ",
        "enum ",
        "typedef ",
        "static ",
        "void ",
        "int ",
        "char ",
        "float ",
        "double ",
        "if ",
        "for ",
        "while ",
        "switch ",
        "case ",
    ),
    "cpp": _lines(
        "namespace ",
        "class ",
        "struct ",
        "template",
        "enum ",
        "void ",
        "int ",
        "float ",
        "double ",
        "if ",
        "for ",
        "while ",
        "switch ",
        "case ",
    ),
    "markdown": (
        r"\n#{1} ",
        r"\n#{2} ",
        r"\n#{3} ",
        r"\n#{4,6} ",
        r"\n```",
        r"\n(?:\*\*\*+|---+|___+)\n",
        r"\n\n",
        r"\n",
        r" ",
    ),
    "html": tuple(
        "<" + tag
        for tag in (
            "body",
            "section",
            "article",
            "div",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "p",
            "table",
            "tr",
            "ul",
            "ol",
            "li",
            "pre",
            "br",
            "td",
            "th",
            "span",
        )
    ),
}
PRESETS["javascript"] = PRESETS["js"]
PRESETS["typescript"] = PRESETS["ts"]
PRESETS["c++"] = PRESETS["cpp"]
PRESETS["md"] = PRESETS["markdown"]


def preset(language: str) -> tuple[str, ...]:
    """The separator hierarchy for ``language`` (regular expressions)."""
    try:
        return PRESETS[language.lower()]
    except KeyError:
        names = ", ".join(sorted(PRESETS))
        raise ConfigError(f"no separator preset for {language!r}: use one of {names}") from None
