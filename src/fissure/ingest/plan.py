"""What a run has to do: compare a source's listing with the manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass, field

from fissure.config import ChunkSettings
from fissure.source.protocol import Item
from fissure.store.manifest import Known

# Bump when what the pipeline stores for the same settings changes (metadata, id scheme,
# how a format is parsed). 2: sha256 document/chunk ids; MediaWiki "= T =" headings.
PIPELINE_VERSION = 2


def fingerprint(settings: ChunkSettings, model_id: str) -> str:
    """A hash of everything that shapes a document's chunks and vectors."""
    fields = asdict(settings)
    if settings.embed_window_tokens is None:  # off: stores made before the option keep their stamp
        for name in ("embed_window_tokens", "embed_window_share", "embed_window_before"):
            fields.pop(name)
    if settings.sub_vector_tokens is None:  # likewise
        fields.pop("sub_vector_tokens")
    if not settings.dedup:
        fields.pop("dedup")
    if not settings.embed_headings:
        fields.pop("embed_headings")
    if settings.max_chars is None:  # the default ceiling: stores made before it keep their stamp
        fields.pop("max_chars")
    payload = {"settings": fields, "model": model_id, "pipeline": PIPELINE_VERSION}
    raw = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


@dataclass
class Plan:
    """The work of one run.

    Attributes:
        todo: Documents to (re)chunk and embed: new, changed, re-configured or forced.
        unchanged: How many documents are already in the store as they are now.
        removed: Sources in the manifest that the source no longer lists.
        seen: How many documents the source listed.
    """

    todo: list[Item] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    seen: int = 0


def make_plan(
    items: Iterable[Item], known: dict[str, Known], stamp: str, force: Collection[str] = ()
) -> Plan:
    """Split a listing into work to do and documents to leave alone or delete."""
    plan = Plan()
    listed: set[str] = set()
    for item in items:
        listed.add(item.source)
        was = known.get(item.source)
        fresh = was is not None and was.digest == item.digest and was.fingerprint == stamp
        if fresh and item.source not in force:
            plan.unchanged += 1
        else:
            plan.todo.append(item)
    plan.seen = len(listed)
    plan.removed = sorted(set(known) - listed)
    return plan
