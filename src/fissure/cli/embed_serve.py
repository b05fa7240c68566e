"""``fissure embed-serve``: one embedder behind OpenAI's ``POST /v1/embeddings``.

``fissure serve`` workers, ``fissure ingest --embedder http:URL#MODEL``, the Ray engine's
embedding actors and any OpenAI client then share one loaded model, whose calls are batched
across their concurrent requests (docs/embedding-service.md).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from fissure.cli.output import err, fail
from fissure.errors import SERVE_MODULES, FissureError, need


def _opt(help: str) -> Any:  # noqa: A002 - typer's own keyword
    return typer.Option(help=help)


def embed_serve(
    spec: Annotated[
        str,
        typer.Option(
            "--embedder",
            help="What embeds: minilm:auto (the fastest MiniLM variant here) | minilm | "
            "minilm:bf16 | minilm:onnx (int8, fast on CPUs) | minilm:onnx-fp32 | static | "
            "static:PATH | hashing (tests) | http:URL#MODEL.",
        ),
    ] = "minilm:auto",
    host: Annotated[str, _opt("Address to listen on; anything but loopback needs a key.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, _opt("TCP port.")] = 8089,
    model_name: Annotated[
        str | None,
        _opt("The model name clients must send (default: the --embedder spec); others get 404."),
    ] = None,
    max_batch: Annotated[int, _opt("Most texts per embedding call, across requests.")] = 64,
    max_wait_ms: Annotated[
        float, _opt("How long the oldest waiting text waits for a fuller batch.")
    ] = 5.0,
    max_queue: Annotated[int, _opt("Most texts waiting; past it requests get 429.")] = 1024,
    max_inputs: Annotated[int, _opt("Most texts per request (400 past it).")] = 2048,
    max_text_chars: Annotated[int, _opt("Most characters per text (400 past it).")] = 100_000,
    retry_after: Annotated[int, _opt("The Retry-After seconds of a 429 or 503.")] = 1,
    api_key_env: Annotated[
        str, _opt("The variable holding the bearer key clients must send (unset: no key).")
    ] = "FISSURE_EMBED_API_KEY",
) -> None:
    """Serve an embedder over HTTP, OpenAI-compatible: POST /v1/embeddings, GET /v1/models,
    /health and /metrics (Prometheus). Concurrent requests share embedding calls (at most
    --max-batch texts, gathered for up to --max-wait-ms). See docs/embedding-service.md.
    """
    need(SERVE_MODULES, "serve", purpose="fissure embed-serve")
    from fissure.embed import load_embedder
    from fissure.embed.load import resolve
    from fissure.embed.service.app import Limits, embedding_app
    from fissure.serve.settings import is_loopback

    key = os.environ.get(api_key_env) or None
    if key is None and not is_loopback(host):
        fail(f"--host {host} is not loopback: set ${api_key_env} to the key clients must send")
    try:
        limits = Limits(max_inputs, max_text_chars, retry_after=retry_after)
        spec = resolve(spec)  # clients name the variant that serves them, not "auto"
        embedder = load_embedder(spec)
        app = embedding_app(
            embedder,
            max_batch=max_batch,
            max_wait_ms=max_wait_ms,
            max_queue=max_queue,
            model_name=model_name or spec,
            limits=limits,
            api_key=key,
        )
    except (FissureError, OSError) as exc:
        fail(str(exc))
    import uvicorn

    name = app.state.model_name
    err.print(
        f"embedding service: model {name} ({embedder.model_id}, {embedder.dim} wide) "
        f"on http://{host}:{port}/v1; fissure's spec: http:http://{host}:{port}/v1#{name}"
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
