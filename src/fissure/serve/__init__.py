"""The ingestion service: an HTTP API that answers uploads at once, and an engine that
chunks, embeds and stores them behind a durable job queue (see docs/service.md).

``fissure serve`` runs it; :func:`fissure.serve.app.create_app` builds the API;
:class:`fissure.serve.queue.JobQueue` is the queue protocol and
:class:`fissure.serve.sqlite_queue.SQLiteQueue` its embedded default. Needs the ``serve``
extra (FastAPI, uvicorn, python-multipart, prometheus-client).
"""
