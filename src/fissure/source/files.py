"""Files and folders on disk, walked safely.

A folder is walked in sorted order, iteratively (any depth). Hidden entries and caches
are skipped and ``.gitignore`` files honoured (each applies below its own folder, deeper
ones first, as in git; see :mod:`fissure.source.ignore`). What cannot be read is yielded
with a reason instead: files over the size limit, named pipes, sockets and devices, links
that dangle or loop, links that lead outside the folder (unless ``follow_outside_links``),
folders that cannot be listed. No problem with one entry ends the walk.

Links inside the folder are followed. Links to folders are walked after everything else,
and only to folders not walked yet: each real folder is walked once (no loops, and a link
to a folder already walked adds no copies), under its own name where it has one.

Reading goes through :func:`fissure.source.read.read_file`, which checks all of this again
when the file is opened and reads at most ``max_bytes + 1`` bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fissure.errors import InputError
from fissure.source.ignore import IgnoreRules
from fissure.source.names import path_name
from fissure.source.read import (
    DEFAULT_MAX_BYTES,
    OUTSIDE_HINT,
    Skipped,
    inside,
    not_regular,
    open_regular,
    over_limit,
    read_at_most,
    unreadable,
    why,
)

__all__ = ["DEFAULT_MAX_BYTES", "MAX_IGNORE_BYTES", "MAX_IGNORE_RULES", "Found", "iter_files"]

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv"})
# A .gitignore is read up to this size; the rest of it is left out (and reported).
MAX_IGNORE_BYTES = 256 * 1024
# Rules in force at once, over a folder's .gitignore and those above it: every entry is
# checked against them, so this bounds the cost of each entry.
MAX_IGNORE_RULES = 10_000


@dataclass(frozen=True, slots=True)
class Found:
    """A file to read, or an entry skipped with its reason (``skip`` is then set).

    ``root`` is the real path of the folder it was found in: reads stay inside it
    (``None`` for a file named directly).
    """

    path: Path
    skip: str | None = None
    root: str | None = None


def iter_files(
    paths: list[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_outside_links: bool = False,
) -> Iterator[Found]:
    """Every file named, and every file under every folder named.

    Args:
        paths: Files and folders (a file named here is read even if it is a link).
        max_bytes: Files larger than this are yielded with a ``skip`` reason.
        follow_outside_links: Follow links whose target is outside the folder walked.

    Raises:
        InputError: A path does not exist.
    """
    for path in paths:
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                raise InputError(f"no such file or folder: {path_name(path)}") from None
            raise InputError(f"cannot read {path_name(path)}: {why(exc)}") from None
        if stat.S_ISDIR(st.st_mode):
            yield from _Walk(Path(path), max_bytes, follow_outside_links).run()
        else:
            yield _file(Path(path), st, max_bytes, None)


def _file(path: Path, st: os.stat_result, max_bytes: int, root: str | None) -> Found:
    if not stat.S_ISREG(st.st_mode):
        return Found(path, not_regular(st.st_mode), root)
    if st.st_size > max_bytes:
        return Found(path, over_limit(st.st_size, max_bytes), root)
    return Found(path, None, root)


_Key = tuple[int, int]  # (device, inode) of a real folder
_Rules = tuple[tuple[int, IgnoreRules], ...]  # (depth of its folder, rules), outermost first


@dataclass(frozen=True, slots=True)
class _Folder:
    path: str  # as walked, under the root named
    parts: tuple[str, ...]  # names below the root
    rules: _Rules
    chain: frozenset[_Key]  # the real folders from the root down to this one


class _Walk:
    def __init__(self, root: Path, max_bytes: int, follow_outside_links: bool) -> None:
        self.root = root
        self.real = os.path.realpath(root)
        self.max_bytes = max_bytes
        self.follow = follow_outside_links
        self.walked: set[_Key] = set()
        self.linked: list[tuple[_Folder, _Key]] = []  # folder links, walked last

    def run(self) -> Iterator[Found]:
        st = os.stat(self.root)
        key = (st.st_dev, st.st_ino)
        self.walked.add(key)
        stack = [_Folder(os.fspath(self.root), (), (), frozenset({key}))]
        while stack or self.linked:
            if not stack:
                folder, key = self.linked.pop(0)
                if key in folder.chain:
                    yield self._skip(folder.path, "a link loop (it leads back to a folder above)")
                elif key not in self.walked:
                    self.walked.add(key)
                    stack.append(_Folder(folder.path, folder.parts, folder.rules,
                                         folder.chain | {key}))  # fmt: skip
                continue
            folder = stack.pop()
            subfolders: list[_Folder] = []
            yield from self._folder(folder, subfolders)
            stack.extend(reversed(subfolders))

    def _skip(self, path: str, why: str) -> Found:
        return Found(Path(path), why, self.real)

    def _folder(self, folder: _Folder, subfolders: list[_Folder]) -> Iterator[Found]:
        try:
            with os.scandir(folder.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield self._skip(folder.path, f"cannot list this folder: {why(exc)}")
            return
        rules = folder.rules
        for entry in entries:
            if entry.name == ".gitignore":
                rules, note = self._ignore_file(entry.path, len(folder.parts), rules)
                if note:
                    yield self._skip(entry.path, note)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            parts = (*folder.parts, entry.name)
            try:
                found = self._entry(entry, folder, parts, rules)
            except OSError as exc:  # the entry changed or vanished while we looked
                found = self._skip(entry.path, unreadable(entry.path, exc))
            if isinstance(found, _Folder):
                subfolders.append(found)
            elif found is not None:
                yield found

    def _entry(
        self, entry: os.DirEntry[str], folder: _Folder, parts: tuple[str, ...], rules: _Rules
    ) -> Found | _Folder | None:
        """A file or skip to yield, a folder to walk, or ``None`` (left out)."""
        if entry.is_symlink():
            return self._link(entry, folder, parts, rules)
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            key = (st.st_dev, st.st_ino)
            if entry.name in _SKIP_DIRS or _ignored(rules, parts, True) or key in self.walked:
                return None  # ignored, or a bind mount of a folder already walked
            self.walked.add(key)
            return _Folder(entry.path, parts, rules, folder.chain | {key})
        if _ignored(rules, parts, False):
            return None
        return _file(Path(entry.path), st, self.max_bytes, self.real)

    def _link(
        self, entry: os.DirEntry[str], folder: _Folder, parts: tuple[str, ...], rules: _Rules
    ) -> Found | _Folder | None:
        try:
            target = os.path.realpath(entry.path, strict=True)
            st = os.stat(target)
        except OSError as exc:  # dangling, a loop, no permission
            if _ignored(rules, parts, False):
                return None
            return self._skip(entry.path, unreadable(entry.path, exc))
        is_dir = stat.S_ISDIR(st.st_mode)
        if (is_dir and entry.name in _SKIP_DIRS) or _ignored(rules, parts, is_dir):
            return None
        if not self.follow and not inside(target, self.real):
            where = f"a link to {path_name(target)}, outside the folder: {OUTSIDE_HINT}"
            return self._skip(entry.path, where)
        if is_dir:
            self.linked.append((_Folder(entry.path, parts, rules, folder.chain),
                                (st.st_dev, st.st_ino)))  # fmt: skip
            return None
        return _file(Path(entry.path), st, self.max_bytes, self.real)

    def _ignore_file(self, path: str, depth: int, rules: _Rules) -> tuple[_Rules, str | None]:
        """The rules in force below a folder with this ``.gitignore``, and a note when
        it cannot be read or is cut to the limits."""
        try:
            fd, st = open_regular(path, root=self.real, follow_outside_links=self.follow)
        except Skipped as exc:
            return rules, f"{exc}; its rules are not applied"
        try:
            data = read_at_most(fd, MAX_IGNORE_BYTES + 1, st.st_size)
        except Skipped as exc:
            return rules, f"{exc}; its rules are not applied"
        finally:
            os.close(fd)
        note = None
        if len(data) > MAX_IGNORE_BYTES:
            data = data[: data.rfind(b"\n", 0, MAX_IGNORE_BYTES) + 1]
            size = max(st.st_size, MAX_IGNORE_BYTES + 1)
            note = (f"{size:,} bytes is over the {MAX_IGNORE_BYTES:,}-byte limit for "
                    f".gitignore files: only its first {len(data):,} bytes apply")  # fmt: skip
        # Git reads patterns as bytes; surrogateescape keeps names that are not UTF-8
        # matchable byte for byte.
        own = IgnoreRules.from_lines(data.decode("utf-8", "surrogateescape").split("\n"))
        room = MAX_IGNORE_RULES - sum(len(r) for _, r in rules)
        if len(own) > room:
            note = (f"{len(own):,} rules would put more than {MAX_IGNORE_RULES:,} in force: only "
                    f"its first {max(room, 0):,} apply")  # fmt: skip
            own = IgnoreRules(own.rules[: max(room, 0)])
        return ((*rules, (depth, own)) if len(own) else rules), note


def _ignored(rules: _Rules, parts: tuple[str, ...], is_dir: bool) -> bool:
    """Whether the deepest ``.gitignore`` with a matching rule ignores ``parts``."""
    for depth, own in reversed(rules):
        decided = own.decide(parts[depth:], is_dir)
        if decided is not None:
            return decided
    return False
