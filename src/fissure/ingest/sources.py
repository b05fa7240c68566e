"""A source from how the user names it: ``PATH``, ``git:PATH@REV``, ``github:OWNER/REPO@REF``."""

from __future__ import annotations

import os
from pathlib import Path

from fissure.errors import InputError
from fissure.source.files import DEFAULT_MAX_BYTES
from fissure.source.protocol import Source


def open_source(
    spec: str,
    *,
    cache_dir: str | Path | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_outside_links: bool = False,
) -> Source:
    """The source named by ``spec``.

    Args:
        spec: A folder or file; ``git:PATH@REV`` (a revision of a local repository, read
            through git, no checkout; ``@REV`` defaults to ``HEAD``); or
            ``github:OWNER/REPO@REF`` (the GitHub API; ``GITHUB_TOKEN`` is used when set,
            ``GITHUB_API_URL`` overrides the API address; ``@REF`` defaults to the default
            branch).
        cache_dir: Where the GitHub source keeps its ETag cache.
        max_bytes: Larger documents are skipped (and reported).
        follow_outside_links: For a folder: also follow links that lead outside it.

    Raises:
        InputError: The spec names nothing usable.
    """
    if spec.startswith("git:"):
        from fissure.source.git import GitSource

        path, rev = _split_ref(spec[len("git:") :])
        return GitSource(path, rev or "HEAD", max_bytes=max_bytes)
    if spec.startswith("github:"):
        from fissure.source.github import GitHubSource

        name, ref = _split_ref(spec[len("github:") :])
        owner, _, repo = name.partition("/")
        if not owner or not repo or "/" in repo:
            raise InputError(f"{spec!r} is not github:OWNER/REPO[@REF]")
        return GitHubSource(
            owner,
            repo,
            ref or None,
            token=os.environ.get("GITHUB_TOKEN") or None,
            base_url=os.environ.get("GITHUB_API_URL") or "https://api.github.com",
            cache_dir=cache_dir,
            max_bytes=max_bytes,
        )
    from fissure.source.local import FolderSource

    return FolderSource(spec, max_bytes=max_bytes, follow_outside_links=follow_outside_links)


def _split_ref(rest: str) -> tuple[str, str]:
    if "@" in rest:
        name, _, ref = rest.rpartition("@")
        return name, ref
    return rest, ""
