"""``.gitignore`` rules: git's answers, pathspec's on ordinary patterns, in linear time."""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fissure.source.ignore import IgnoreRules

_SEGMENTS = ["a", "b", "ab", "*", "?", "a*", "*b", "[ab]", "[!a]", "a?b", "*a*", "**", "*ab*b",
             "b*?a*a", "*ab*ba*"]  # fmt: skip
_names = st.text("ab", min_size=1, max_size=3)
_paths = st.lists(_names, min_size=1, max_size=4)


def _pattern(negated: bool, lead: bool, segments: list[str], trail: bool) -> str:
    return (
        ("!" if negated else "")
        + ("/" if lead else "")
        + "/".join(segments)
        + ("/" if trail else "")
    )


def _patterns(negation: bool) -> st.SearchStrategy[str]:
    return st.builds(
        _pattern,
        st.booleans() if negation else st.just(False),
        st.booleans(),
        st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=3),
        st.booleans(),
    )


def excluded(rules: IgnoreRules, parts: list[str]) -> bool:
    """As the walk decides: an ignored folder is not entered, then the file itself."""
    for k in range(1, len(parts)):
        if rules.decide(parts[:k], is_dir=True):
            return True
    return rules.decide(parts, is_dir=False) is True


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_patterns(negation=False), min_size=1, max_size=4), _paths)
def test_agrees_with_pathspec_on_ordinary_patterns(patterns: list[str], parts: list[str]) -> None:
    # pathspec differs from git on negations and on "dir/**/" folder-only patterns (see
    # the git test below), so those are left to git.
    patterns = [p for p in patterns if not (p.endswith("/") and "**" in p)] or ["a"]
    pathspec = pytest.importorskip("pathspec")  # a dev dependency, the reference here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = pathspec.GitIgnoreSpec.from_lines(patterns, backend="simple")
    assert excluded(IgnoreRules.from_lines(patterns), parts) == spec.match_file("/".join(parts))


@settings(max_examples=800, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "ab", "ba", "*", "?", "[ab]", "[!a]", "[a-b]"]),
             min_size=1, max_size=8).map("".join),
    st.text("abc", min_size=1, max_size=9),
)  # fmt: skip
@example("*ab*ba*", "aba")  # pieces between stars must not overlap
@example("*a?*?a*", "aaa")
@example("a*a", "a")  # nor head and tail
def test_one_name_matches_as_fnmatch_does(pattern: str, name: str) -> None:
    # Within one name gitignore's wildcards are fnmatch's; fnmatch's regex is the oracle.
    rules = IgnoreRules.from_lines([pattern])
    assert (rules.decide([name], False) is True) == fnmatch.fnmatchcase(name, pattern)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_patterns(negation=True), min_size=1, max_size=6), _paths, st.booleans())
def test_the_last_matching_rule_decides(patterns: list[str], parts: list[str], is_dir: bool):
    # The rules are looked up by name where they can be: same answer as trying every one.
    rules = IgnoreRules.from_lines(patterns)
    last = next((r for r in reversed(rules.rules) if r.match(parts, is_dir)), None)
    assert rules.decide(parts, is_dir) == (None if last is None else not last.negated)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(_patterns(negation=True), min_size=1, max_size=4),
    st.lists(_paths, min_size=1, max_size=6, unique_by=lambda p: "/".join(p)),
)
def test_agrees_with_git(tmp_path_factory: pytest.TempPathFactory, patterns, paths) -> None:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("\n".join(patterns) + "\n")
    made = []
    for parts in paths:
        target = repo.joinpath(*parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a name used both as a file and as a folder: keep the first
        made.append(parts)
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "--others", "--exclude-standard", "-z"],
        capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    rules = IgnoreRules.from_lines(patterns)
    for parts in made:
        if repo.joinpath(*parts).is_file():
            ours = excluded(rules, parts)
            assert ours == ("/".join(parts) not in listed), (patterns, parts)


def test_git_syntax() -> None:
    rules = IgnoreRules.from_lines([
        "# a comment", "", "build/", "*.log", "!keep.log", "/top.txt", "docs/**",
        "a/**/b", r"\#hash", r"\!bang", "trail\\ ", "spaces   ", "[!a-c]z", "[[:digit:]]*.tmp",
        r"lit\*star", "[]x]y",
    ])  # fmt: skip
    cases = [
        (("build",), True, True), (("src", "build"), True, True), (("build",), False, None),
        (("x", "a.log"), False, True), (("keep.log",), False, False),
        (("top.txt",), False, True), (("s", "top.txt"), False, None),
        (("docs",), True, None), (("docs", "z", "q"), False, True),
        (("a", "b"), False, True), (("a", "q", "r", "b"), False, True),
        (("#hash",), False, True), (("!bang",), False, True), (("trail ",), False, True),
        (("spaces",), False, True), (("spaces   ",), False, None),
        (("dz",), False, True), (("az",), False, None), (("9x.tmp",), False, True),
        (("lit*star",), False, True), (("litXstar",), False, None), (("]y",), False, True),
    ]  # fmt: skip
    for parts, is_dir, want in cases:
        assert rules.decide(parts, is_dir) is want, parts


def test_backtracking_patterns_take_linear_time() -> None:
    rules = IgnoreRules.from_lines(["*a*a*a*a*a*a*a*a*a*a*a*ab", "**/a*/**/a*a*a*a*/**/a*b"])
    started = time.perf_counter()
    assert rules.decide(["a" * 60], False) is None
    assert rules.decide(["a" * 100_000], False) is None
    assert rules.decide(["a" * 30] * 200, False) is None
    assert rules.decide(["a" * 59 + "b"], False) is True
    assert time.perf_counter() - started < 2.0


def test_names_that_are_not_utf8_match_byte_for_byte(tmp_path: Path) -> None:
    name = b"caf\xe9.md".decode("utf-8", "surrogateescape")
    rules = IgnoreRules.from_lines([name, "*\udcff"])
    assert rules.decide([name], False) is True
    assert rules.decide(["x\udcff"], False) is True
    assert rules.decide(["cafe.md"], False) is None
