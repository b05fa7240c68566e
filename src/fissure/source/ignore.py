"""``.gitignore`` rules, matched in time linear in the pattern and the path.

Regex translations of wildcards (pathspec's, fnmatch's) backtrack: ``*a*a*a*a*a*a*a*a*ab``
against sixty ``a`` takes hours. Here a pattern is matched segment by segment: within a
segment the pieces between ``*`` are placed at their leftmost occurrence, and across
segments the groups between ``**`` likewise. Leftmost placement is always right (a ``*``
after a piece can absorb whatever the piece no longer covers), so nothing is retried and
the cost is at most (path length) x (pattern length).

The syntax is git's (``gitignore(5)``): ``#`` comments, ``!`` negation, ``\\`` escapes,
trailing spaces dropped unless escaped, a leading or inner ``/`` anchors the pattern to the
folder of its ``.gitignore``, a trailing ``/`` matches folders only, ``*``, ``?``, ``[...]``
(ranges, ``!``/``^`` negation, ``[:alpha:]`` classes) within a name, and ``**/``, ``/**/``,
``/**`` across folders. A path is matched by the last rule that matches it; the walk does not
enter an ignored folder, so, as in git, nothing inside it can be re-included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


class _Wild:
    """A wildcard token (a distinct object: an escaped ``\\*`` is the plain string)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_STAR = _Wild("*")  # any run of characters within one name
_ANY = _Wild("?")  # any one character
_DOUBLE = None  # a segment: ``**``, any number of folders

_CLASSES: dict[str, Callable[[str], bool]] = {
    "alnum": str.isalnum, "alpha": str.isalpha, "digit": str.isdigit,
    "lower": str.islower, "upper": str.isupper, "space": str.isspace,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF", "blank": lambda c: c in " \t",
    "punct": lambda c: c.isascii() and not c.isalnum() and c.isprintable() and c != " ",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127, "print": str.isprintable,
    "graph": lambda c: c.isprintable() and c != " ",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Class:
    """``[...]``: one character in (or, ``negated``, not in) the set."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    named: tuple[Callable[[str], bool], ...]
    negated: bool

    def __call__(self, c: str) -> bool:
        hit = (
            c in self.chars
            or any(lo <= c <= hi for lo, hi in self.ranges)
            or any(f(c) for f in self.named)
        )
        return hit != self.negated and c != "/"


_Token = str | _Class | _Wild  # a literal character, a class, _STAR or _ANY
_Piece = tuple[_Token, ...]  # tokens without _STAR


class _Name:
    """A wildcard pattern for one path segment (``match`` is picked for its shape)."""

    __slots__ = ("literal", "pieces", "match")

    def __init__(self, tokens: list[_Token], literal: str | None) -> None:
        self.literal = literal  # set when the pattern has no wildcard at all
        pieces: list[_Piece] = [()]
        for t in tokens:
            if t is _STAR:
                pieces.append(())
            else:
                pieces[-1] = (*pieces[-1], t)
        self.pieces = pieces  # one piece: no star; else the text around and between stars
        plain = [p for p in pieces if all(isinstance(t, str) for t in p)]
        fixed = ["".join(str(t) for t in p) for p in pieces] if len(plain) == len(pieces) else None
        self.match: Callable[[str], bool] = self._general
        if literal is not None:
            self.match = literal.__eq__
        elif fixed is not None and len(fixed) == 2 and not fixed[0]:  # *.log
            self.match = _ends(fixed[1])
        elif fixed is not None and len(fixed) == 2 and not fixed[1]:  # build*
            self.match = _starts(fixed[0])

    def _general(self, name: str) -> bool:
        pieces = self.pieces
        head, tail = pieces[0], pieces[-1]
        if len(pieces) == 1:
            return len(name) == len(head) and _at(head, name, 0)
        end = len(name) - len(tail)
        if end < len(head) or not _at(head, name, 0) or not _at(tail, name, end):
            return False
        at = len(head)
        for piece in pieces[1:-1]:
            found = _find(piece, name, at, end)
            if found < 0:
                return False
            at = found + len(piece)
        return True


def _ends(suffix: str) -> Callable[[str], bool]:
    return lambda name: name.endswith(suffix)


def _starts(prefix: str) -> Callable[[str], bool]:
    return lambda name: name.startswith(prefix)


def _at(piece: _Piece, name: str, at: int) -> bool:
    for i, t in enumerate(piece):
        c = name[at + i]
        if isinstance(t, str):
            if c != t:
                return False
        elif isinstance(t, _Class) and not t(c):
            return False
        # else _ANY: any one character
    return True


def _find(piece: _Piece, name: str, start: int, end: int) -> int:
    """The leftmost ``i`` in ``start..end-len(piece)`` where ``piece`` matches."""
    for i in range(start, end - len(piece) + 1):
        if _at(piece, name, i):
            return i
    return -1


class Rule:
    """One pattern line: ``negated`` re-includes; ``folders_only`` from a trailing ``/``.

    The segments between ``**`` form groups: ``first`` must match at the start of the
    path, ``last`` at its end, each of ``middle`` at its leftmost place in between; with
    no ``**`` at all, ``first`` is the whole pattern.
    """

    __slots__ = ("pattern", "negated", "folders_only", "first", "middle", "last", "double",
                 "least")  # fmt: skip

    def __init__(
        self, pattern: str, segments: Sequence[_Name | None], negated: bool, folders_only: bool
    ) -> None:
        self.pattern, self.negated, self.folders_only = pattern, negated, folders_only
        groups: list[tuple[_Name, ...]] = [()]
        for s in segments:
            if s is _DOUBLE:
                groups.append(())
            else:
                groups[-1] = (*groups[-1], s)
        self.double = len(groups) > 1
        self.first, self.last = groups[0], groups[-1] if self.double else ()
        self.middle = tuple(groups[1:-1])
        # a trailing ``/**`` needs at least one name below what the groups cover
        self.least = sum(map(len, groups)) + (self.double and not self.last)

    @property
    def last_name(self) -> _Name | None:
        """The pattern of the path's last name, when the rule fixes one."""
        if self.double:
            return self.last[-1] if self.last else None
        return self.first[-1]

    def match(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether the path ``parts`` (names below the rule's folder) matches."""
        if self.folders_only and not is_dir:
            return False
        n = len(parts)
        if not self.double:
            return n == len(self.first) and _all(self.first, parts, 0)
        if n < self.least or not _all(self.first, parts, 0):
            return False
        end = n - len(self.last)
        if self.last and not _all(self.last, parts, end):
            return False
        at = len(self.first)
        for group in self.middle:
            while at + len(group) <= end and not _all(group, parts, at):
                at += 1
            if at + len(group) > end:
                return False
            at += len(group)
        return at < n if not self.last else at <= end


def _all(names: Sequence[_Name], parts: Sequence[str], at: int) -> bool:
    for i, name in enumerate(names):  # noqa: SIM110 - a loop: all(genexpr) is 2x slower here
        if not name.match(parts[at + i]):
            return False
    return True


class IgnoreRules:
    """The rules of one ``.gitignore``.

    Example:
        >>> rules = IgnoreRules.from_lines(["build/", "*.log", "!keep.log"])
        >>> rules.decide(["src", "a.log"], is_dir=False), rules.decide(["keep.log"], False)
        (True, False)
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        # Rules whose last name is a plain word are looked up by it; only the others are
        # tried one by one, so a long list of names costs one dictionary look-up.
        self._by_name: dict[str, list[int]] = {}
        self._others: list[int] = []
        for i, rule in enumerate(self.rules):
            last = rule.last_name
            if last is not None and last.literal is not None:
                self._by_name.setdefault(last.literal, []).append(i)
            else:
                self._others.append(i)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> IgnoreRules:
        """Parse pattern lines; blank lines and comments are left out."""
        return cls([r for line in lines if (r := parse_rule(line)) is not None])

    def decide(self, parts: Sequence[str], is_dir: bool) -> bool | None:
        """``True``: ignored; ``False``: re-included by a ``!`` rule; ``None``: no rule."""
        rules = self.rules
        best = -1
        for i in reversed(self._by_name.get(parts[-1], ())):
            if rules[i].match(parts, is_dir):
                best = i
                break
        for i in reversed(self._others):
            if i <= best:
                break
            if rules[i].match(parts, is_dir):
                best = i
                break
        return None if best < 0 else not rules[best].negated

    def __len__(self) -> int:
        return len(self.rules)


def parse_rule(line: str) -> Rule | None:
    """One ``.gitignore`` line as a rule, or ``None`` for a blank line or a comment."""
    text = line.rstrip("\n\r")
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    folders_only = text.endswith("/") and not text.endswith("\\/")
    text = text.rstrip("/") if folders_only else text
    if not text:
        return None
    raw = text.split("/")
    anchored = raw[0] == "" or len(raw) > 1
    raw = [s for s in raw if s != ""]
    segments: list[_Name | None] = [] if anchored else [_DOUBLE]
    for s in raw:
        if s == "**":
            if not segments or segments[-1] is not _DOUBLE:
                segments.append(_DOUBLE)
        else:
            segments.append(_name(s))
    if not raw:
        return None
    return Rule(line.strip(), segments, negated, folders_only)


def _name(text: str) -> _Name:
    tokens: list[_Token] = []
    wild = False
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            tokens.append(text[i + 1])
            i += 2
            continue
        if c == "*":
            wild = True
            if not tokens or tokens[-1] is not _STAR:
                tokens.append(_STAR)
        elif c == "?":
            wild = True
            tokens.append(_ANY)
        elif c == "[" and (parsed := _class(text, i)) is not None:
            wild = True
            tokens.append(parsed[0])
            i = parsed[1]
            continue
        else:
            tokens.append(c)
        i += 1
    literal = None if wild else "".join(t for t in tokens if isinstance(t, str))
    return _Name(tokens, literal)


def _class(text: str, start: int) -> tuple[_Class, int] | None:
    """Parse ``[...]`` at ``start``: the class and the index after it, or ``None`` when it
    is not closed (then ``[`` is a plain character, as in git)."""
    i = start + 1
    negated = i < len(text) and text[i] in "!^"
    i += negated
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    named: list[Callable[[str], bool]] = []
    first = True
    while i < len(text):
        c = text[i]
        if c == "]" and not first:
            return _Class(frozenset(chars), tuple(ranges), tuple(named), negated), i + 1
        first = False
        if c == "[" and text.startswith("[:", i) and (close := text.find(":]", i + 2)) > 0:
            test = _CLASSES.get(text[i + 2 : close])
            if test is not None:
                named.append(test)
                i = close + 2
                continue
        if c == "\\" and i + 1 < len(text):
            i += 1
            c = text[i]
        if i + 2 < len(text) and text[i + 1] == "-" and text[i + 2] != "]":
            hi = text[i + 2]
            if hi == "\\" and i + 3 < len(text):
                hi = text[i + 3]
                i += 1
            ranges.append((c, hi))
            i += 3
            continue
        chars.add(c)
        i += 1
    return None
