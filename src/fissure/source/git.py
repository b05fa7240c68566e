"""A git revision as a source, read through git itself: no checkout, no working tree.

``git ls-tree -r`` lists the blobs with their ids (the content hash comes free, so an
unchanged repository is never read) and one long-lived ``git cat-file --batch`` process
streams the bytes of those that changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from fissure.errors import InputError
from fissure.source.files import DEFAULT_MAX_BYTES
from fissure.source.names import path_name
from fissure.source.protocol import Item

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv"})


class GitSource:
    """The files of a repository at a revision (``git:PATH@REV``).

    Documents are named ``git:<repository>/<path>``: the revision is left out, so moving
    to another revision re-embeds only the files that differ. Hidden files and folders
    are skipped, as for folders on disk; submodules and symbolic links too.

    Args:
        repo: The repository (any folder inside it, or a bare repository).
        rev: A commit, branch, tag … (anything ``git rev-parse`` understands).
        max_bytes: Larger blobs are listed as skipped.

    Raises:
        InputError: git is missing, or the path or revision is not there.
    """

    def __init__(
        self, repo: str | Path, rev: str = "HEAD", *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if shutil.which("git") is None:
            raise InputError("git is not installed: install it to read git:PATH@REV sources")
        self.repo = Path(repo).resolve()
        if not self.repo.is_dir():
            raise InputError(f"no such folder: {path_name(repo)}")
        self.rev = rev
        rev_id = self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        self.commit = rev_id.decode("ascii", "replace").strip()
        self.origin = f"git:{path_name(self.repo)}"
        self.max_bytes = max_bytes

    def scan(self) -> Iterator[Item]:
        """Every blob of the revision, hashed by its blob id.

        Paths are bytes in git; one that is not UTF-8 is named by its lossless text
        form (:func:`~fissure.source.names.path_name`), ``git:file:///repo/caf%E9.md``.
        """
        listing = self._git("ls-tree", "-r", "-z", "--long", "--full-tree", self.commit)
        for record in listing.split(b"\0"):
            if not record:
                continue
            raw_meta, _, raw_path = record.partition(b"\t")
            mode, kind, blob, size = raw_meta.decode("ascii", "replace").split()
            path = os.fsdecode(raw_path)
            if kind != "blob" or mode == "120000" or _hidden(path):
                continue
            source = f"git:{path_name(os.path.join(self.repo, path))}"
            if int(size) > self.max_bytes:
                skip = f"{int(size):,} bytes is over the {self.max_bytes:,}-byte limit"
                yield Item(source, blob, blob, int(size), skip)
            else:
                yield Item(source, blob, blob, int(size))

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        """Stream blobs through one ``git cat-file --batch`` process."""
        process = subprocess.Popen(
            ["git", "-C", str(self.repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            for item in items:
                process.stdin.write(item.ref.encode() + b"\n")
                process.stdin.flush()
                header = process.stdout.readline().decode().split()
                if len(header) != 3 or header[1] != "blob":
                    yield item, InputError(f"git cannot read blob {item.ref} of {item.source}")
                    continue
                data = process.stdout.read(int(header[2]))
                process.stdout.read(1)  # the newline after each object
                yield item, data
        finally:
            process.stdin.close()
            process.kill()
            process.wait()

    def _git(self, *args: str) -> bytes:
        done = subprocess.run(
            ["git", "-C", str(self.repo), *args], capture_output=True, check=False
        )
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = lines[-1] if lines else "no such revision"
            raise InputError(f"git:{path_name(self.repo)}@{self.rev}: {why}")
        return done.stdout


def _hidden(path: str) -> bool:
    parts = path.split("/")
    return any(p.startswith(".") for p in parts) or any(p in _SKIP_DIRS for p in parts[:-1])
