"""``fissure submit``: upload files to a running ``fissure serve`` and follow their jobs."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from fissure.cli.options import json_option
from fissure.cli.output import err, fail, print_json
from fissure.errors import FissureError
from fissure.source import iter_files

KEY_ENV = "FISSURE_API_KEY"


def submit(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    server: Annotated[str, typer.Option(help="The service's address.")] = "http://127.0.0.1:8000",
    key: Annotated[
        str | None, typer.Option(help=f"API key (default: ${KEY_ENV}); none for a keyless server.")
    ] = None,
    batch: Annotated[int, typer.Option(help="Files per request.")] = 20,
    follow: Annotated[
        bool, typer.Option(help="Wait for every job to finish, printing each as it does.")
    ] = True,
    timeout: Annotated[
        float, typer.Option(help="Give up following after this many seconds.")
    ] = 3600,
    as_json: Annotated[
        bool,
        json_option(
            "Print JSON lines, one job per line as it finishes, as GET /v1/jobs/ID returns "
            "it (id, name, state, chunks, document_id, error …)."
        ),
    ] = False,
) -> None:
    """Upload PATHS to SERVER (each file a job), then follow the job events until every job
    is done or failed.

    Exit status: 0 every job done, 1 some failed or were still unfinished at --timeout,
    2 an error (no files, a refused upload, a server that cannot be reached).
    """
    import httpx

    key = key or os.environ.get(KEY_ENV) or None
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        files = _files(paths)
    except FissureError as exc:
        fail(str(exc))
    if not files:
        fail("no files to submit")
    with httpx.Client(base_url=server, headers=headers, timeout=120) as client:
        try:
            jobs, after = _upload(client, files, max(1, batch))
            fresh = sum(j["created_now"] for j in jobs.values())
            err.print(
                f"accepted {len(jobs)} documents ({fresh} new, {len(jobs) - fresh} already there)"
            )
            failed = _follow(client, jobs, after, timeout, as_json) if follow else 0
        except httpx.HTTPError as exc:
            fail(f"cannot reach {server}: {exc}")
    if failed:
        raise typer.Exit(1)


def _files(paths: list[Path]) -> list[tuple[str, Path]]:
    """``(name sent, path)``: a file by its name, a folder's files by their path in it."""
    out = []
    for path in paths:
        base = path if path.is_dir() else path.parent
        for found in iter_files([path]):
            if found.skip:
                err.print(f"skipped {found.path}: {found.skip}")
                continue
            out.append((found.path.relative_to(base).as_posix(), found.path))
    return out


def _upload(client: Any, files: list[tuple[str, Path]], batch: int) -> tuple[dict[str, Any], int]:
    """Upload in batches, waiting out 429/503; returns the jobs by id and where to follow."""
    jobs: dict[str, Any] = {}
    after: int | None = None
    for at in range(0, len(files), batch):
        part = files[at : at + batch]
        while True:
            body = [("files", (name, path.read_bytes())) for name, path in part]
            answer = client.post("/v1/documents", files=body)
            if answer.status_code in (429, 503):
                wait = float(answer.headers.get("retry-after", "5"))
                err.print(f"server busy ({answer.status_code}); retrying in {wait:g} s")
                time.sleep(wait)
                continue
            if answer.status_code != 202:
                fail(f"{answer.status_code}: {_detail(answer)}")
            break
        accepted = answer.json()
        after = accepted["events_after"] if after is None else min(after, accepted["events_after"])
        jobs.update({j["id"]: j for j in accepted["jobs"]})
    return jobs, after or 0


def _follow(client: Any, jobs: dict[str, Any], after: int, timeout: float, as_json: bool) -> int:
    """Print each job as it finishes; returns how many failed."""
    waiting = {i for i, j in jobs.items() if j["state"] not in ("done", "failed")}
    failed = 0
    for job in jobs.values():
        if job["state"] in ("done", "failed"):
            failed += _report(job, as_json)
    deadline = time.monotonic() + timeout
    last = after
    while waiting and time.monotonic() < deadline:
        for seq, event in _events(client, last, deadline):
            last = seq
            if event["job_id"] in waiting and event["state"] in ("done", "failed"):
                waiting.discard(event["job_id"])
                failed += _report(client.get(f"/v1/jobs/{event['job_id']}").json(), as_json)
                if not waiting:
                    break
    if waiting:
        err.print(
            f"[bold red]{len(waiting)} jobs still unfinished after {timeout:g} s[/]", markup=True
        )
    err.print(f"{len(jobs) - failed - len(waiting)} done, {failed} failed")
    return failed + len(waiting)


def _events(client: Any, after: int, deadline: float) -> Iterator[tuple[int, dict[str, Any]]]:
    """Server-sent events after ``after`` until the stream ends or the deadline."""
    import httpx

    seq = after
    try:
        with client.stream(
            "GET", "/v1/events", params={"after": after}, timeout=httpx.Timeout(30, read=60)
        ) as stream:
            for line in stream.iter_lines():
                if line.startswith("id: "):
                    seq = int(line[4:])
                elif line.startswith("data: "):
                    yield seq, json.loads(line[6:])
                if time.monotonic() > deadline:
                    return
    except httpx.ReadTimeout:
        return  # reconnect from the last event


def _report(job: dict[str, Any], as_json: bool) -> int:
    if as_json:
        print_json(job)
        return int(job["state"] != "done")
    if job["state"] == "done":
        typer.echo(f"done    {job['name']}  {job['chunks']} chunks  {job['document_id']}")
        return 0
    error = job.get("error") or {}
    typer.echo(f"failed  {job['name']}  {error.get('type')}: {error.get('message')}")
    return 1


def _detail(answer: Any) -> str:
    try:
        return str(answer.json().get("detail"))
    except ValueError:
        return answer.text[:200]
