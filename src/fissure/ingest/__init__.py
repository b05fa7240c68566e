"""The ingestion pipeline: incremental, crash-safe, with worker processes and a
dead-letter queue. :func:`ingest` is the entry point; :func:`open_source` names sources."""

from fissure.ingest.pipeline import Options, Summary, default_workers, ingest
from fissure.ingest.plan import fingerprint
from fissure.ingest.sources import open_source

__all__ = ["Options", "Summary", "default_workers", "fingerprint", "ingest", "open_source"]
