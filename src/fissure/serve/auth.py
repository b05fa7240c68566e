"""API keys: stored hashed, each bound to one namespace, with scopes ``read`` and ``write``.

Keys come from a file (``--keys-file``) and/or ``$FISSURE_API_KEYS``, in the same format:
one JSON object per line (or one JSON array of them)::

    {"name": "ci", "sha256": "<sha256 hex>", "namespace": "docs", "scopes": ["read", "write"]}

Only the hash is ever stored: ``fissure key`` makes a key, prints it once and writes its
line. Keys are random 256-bit tokens, so a plain sha256 is the right hash (a slow password
hash protects guessable secrets, and these are not). A request names its key as
``Authorization: Bearer <key>`` (or ``X-API-Key: <key>``).

``read`` covers queries, documents, jobs and events; ``write`` covers uploads, deletes and
the dead-letter queue. Without keys the service only answers loopback clients, everything
in the ``default`` namespace.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fissure.errors import ConfigError, InputError
from fissure.serve.jobs import DEFAULT_NAMESPACE, check_namespace

KEYS_ENV = "FISSURE_API_KEYS"
SCOPES = ("read", "write")
PREFIX = "fsk_"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is: its key's name, namespace and scopes."""

    name: str
    namespace: str
    scopes: frozenset[str]

    def allows(self, scope: str) -> bool:
        """Whether the key has ``scope``."""
        return scope in self.scopes


ANONYMOUS = Principal("anonymous", DEFAULT_NAMESPACE, frozenset(SCOPES))


class Keys:
    """The configured keys, by hash.

    Args:
        entries: ``sha256 -> Principal``.
    """

    def __init__(self, entries: dict[str, Principal]) -> None:
        self._by_hash = entries

    @property
    def enabled(self) -> bool:
        """Whether any key is configured (then every request needs one)."""
        return bool(self._by_hash)

    @classmethod
    def load(cls, file: Path | None = None, env: str | None = None) -> Keys:
        """Keys from ``file`` and the text of ``$FISSURE_API_KEYS`` (``env``).

        Raises:
            ConfigError: An entry is malformed (the message names it).
        """
        entries: dict[str, Principal] = {}
        texts: list[tuple[str, str]] = []
        if file is not None:
            try:
                texts.append((str(file), Path(file).read_text("utf-8")))
            except OSError as exc:
                raise ConfigError(f"cannot read the keys file {file}: {exc}") from exc
        if env is None:
            env = os.environ.get(KEYS_ENV, "")
        if env.strip():
            texts.append((f"${KEYS_ENV}", env))
        for where, text in texts:
            for n, raw in enumerate(_records(text, where), 1):
                digest, principal = _entry(raw, f"{where} entry {n}")
                entries[digest] = principal
        return cls(entries)

    def identify(self, key: str | None) -> Principal | None:
        """The principal of ``key``, or ``None`` when it is missing or unknown."""
        if not key:
            return None
        return self._by_hash.get(hash_key(key))


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def new_key(name: str, namespace: str, scopes: Iterable[str]) -> tuple[str, str]:
    """A fresh key and the JSON line that configures it (only its hash).

    Raises:
        ConfigError: A scope is not valid.
        InputError: The namespace is not valid.
    """
    scopes = sorted(set(scopes))
    _check_scopes(scopes, "the new key")
    check_namespace(namespace)
    key = PREFIX + secrets.token_urlsafe(32)
    line = json.dumps(
        {"name": name, "sha256": hash_key(key), "namespace": namespace, "scopes": scopes}
    )
    return key, line


def _records(text: str, where: str) -> list[object]:
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            value = json.loads(stripped)
            return list(value) if isinstance(value, list) else [value]
        return [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where} is not JSON lines of keys: {exc}") from exc


def _entry(raw: object, where: str) -> tuple[str, Principal]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} is not a JSON object")
    digest = str(raw.get("sha256", "")).lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ConfigError(
            f"{where}: sha256 must be the key's 64-hex-digit sha256 (fissure key "
            "writes it); plain keys are never stored"
        )
    scopes = raw.get("scopes", list(SCOPES))
    if not isinstance(scopes, list):
        raise ConfigError(f'{where}: scopes must be a list, e.g. ["read"]')
    _check_scopes(scopes, where)
    try:
        namespace = check_namespace(str(raw.get("namespace", DEFAULT_NAMESPACE)))
    except InputError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    name = str(raw.get("name") or digest[:8])
    return digest, Principal(name, namespace, frozenset(scopes))


def _check_scopes(scopes: Iterable[object], where: str) -> None:
    bad = [s for s in scopes if s not in SCOPES]
    if bad:
        raise ConfigError(f"{where}: unknown scopes {bad}: use read and/or write")
