"""Questions for ``fissure tune`` from an OpenAI-compatible chat-completions endpoint.

Passages are sampled from the corpus (a fixed seed: the same corpus gives the same
passages); for each, the model is asked for one question that the passage answers and the
exact sentences that answer it, as JSON. Each quote is then looked for verbatim in the
passage's document (:func:`fissure.eval.peers.locate`); a quote that is not there is dropped
and counted, and so is a question left without one. Nothing is placed by a guess.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from typing import Any

from fissure.errors import ConfigError, FissureError
from fissure.eval.dataset import Dataset, Question
from fissure.eval.peers import locate

PASSAGE_CHARS = 1500
MIN_PASSAGE_CHARS = 200
TIMEOUT = 120.0
PROMPT = """Here is a passage from a document.

<passage>
{passage}
</passage>

Write one question that a reader of the whole document might ask and that this passage
answers. Then copy, word for word, the one to three sentences of the passage that answer it.
Reply with JSON only, no prose: {{"question": "...", "quotes": ["...", "..."]}}"""
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class GenerationError(FissureError):
    """The endpoint failed, or answered in a shape that is not chat completions."""


@dataclass(frozen=True)
class Generated:
    """The questions made, and what was dropped.

    Attributes:
        dataset: The corpora and the questions whose answers were found verbatim.
        asked: Passages sent.
        malformed: Replies whose message was not the JSON asked for.
        quotes: Quotes received.
        unlocated: Quotes not found verbatim in their document (dropped).
        dropped: Questions left without a quote found (dropped).
    """

    dataset: Dataset
    asked: int
    malformed: int
    quotes: int
    unlocated: int
    dropped: int


def passages(corpora: dict[str, str], n: int, seed: int = 0) -> list[tuple[str, int, int]]:
    """``n`` passages ``(corpus, start, end)`` drawn at random, weighted by document length,
    each about :data:`PASSAGE_CHARS` long and starting and ending at a line break when one
    is near."""
    rng = random.Random(seed)
    ids = [cid for cid, t in corpora.items() if len(t.strip()) >= MIN_PASSAGE_CHARS]
    if not ids:
        raise ConfigError(f"no document has {MIN_PASSAGE_CHARS} characters to ask about")
    weights = [len(corpora[c]) for c in ids]
    out = []
    for _ in range(n):
        cid = rng.choices(ids, weights)[0]
        text = corpora[cid]
        at = rng.randrange(max(1, len(text) - PASSAGE_CHARS))
        start = text.rfind("\n", 0, at) + 1 if text.rfind("\n", 0, at) > at - 400 else at
        end = text.find("\n", start + PASSAGE_CHARS - 300, start + PASSAGE_CHARS + 300)
        out.append((cid, start, end if end != -1 else min(len(text), start + PASSAGE_CHARS)))
    return out


def generate(
    corpora: dict[str, str],
    n: int,
    *,
    endpoint: str,
    model: str,
    api_key_env: str = "OPENAI_API_KEY",
    seed: int = 0,
) -> Generated:
    """Ask the endpoint for ``n`` questions about passages of ``corpora``.

    Args:
        corpora: Document id → text.
        n: How many passages to ask about.
        endpoint: The API root (``http://localhost:8000/v1``) or the full
            ``…/chat/completions`` address.
        model: The model name the endpoint expects.
        api_key_env: The environment variable holding the key (none set: no key sent).
        seed: Which passages.

    Raises:
        GenerationError: The endpoint is unreachable, answers an HTTP error, or answers
            what is not a chat completion; or no reply held a usable question.
    """
    import httpx

    if n < 1:
        raise ConfigError(f"--generate {n}: ask for at least one question")
    url = chat_url(endpoint)
    headers = {"Content-Type": "application/json"}
    if key := os.environ.get(api_key_env):
        headers["Authorization"] = f"Bearer {key}"
    questions: list[Question] = []
    malformed = n_quotes = unlocated = dropped = 0
    with httpx.Client(timeout=TIMEOUT, headers=headers) as client:
        for cid, start, end in passages(corpora, n, seed):
            reply = _ask(client, url, model, corpora[cid][start:end])
            parsed = parse_reply(reply)
            if parsed is None:
                malformed += 1
                continue
            query, quotes = parsed
            n_quotes += len(quotes)
            spans, missing = locate(corpora[cid], [(q, None) for q in quotes])
            unlocated += missing
            if not spans:
                dropped += 1
                continue
            questions.append(Question(query, cid, tuple(sorted(set(spans)))))
    if not questions:
        raise GenerationError(f"{url}: none of the {n} replies gave a question with a quote "
                              f"found verbatim ({malformed} were not the JSON asked for, "
                              f"{unlocated} quotes not found); try another --model")  # fmt: skip
    named = dict.fromkeys(q.corpus_id for q in questions)
    order = [*named, *(c for c in corpora if c not in named)]
    dataset = Dataset("generated", {c: corpora[c] for c in order}, tuple(questions))
    return Generated(dataset, n, malformed, n_quotes, unlocated, dropped)


def chat_url(endpoint: str) -> str:
    """The chat-completions address of an API root or of the address itself.

    Raises:
        ConfigError: Not an ``http(s)://`` address.
    """
    if not re.match(r"^https?://[^/\s]+", endpoint):
        raise ConfigError(f"--endpoint {endpoint!r}: give an http(s) address such as "
                          "http://localhost:8000/v1")  # fmt: skip
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


def _ask(client: Any, url: str, model: str, passage: str) -> str:
    """The message text of one chat completion."""
    import httpx

    body = {"model": model, "temperature": 0,
            "messages": [{"role": "user", "content": PROMPT.format(passage=passage)}]}  # fmt: skip
    try:
        response = client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise GenerationError(f"cannot reach {url}: {exc}; check --endpoint") from exc
    if response.status_code >= 400:
        detail = " ".join(response.text.split())[:200]
        raise GenerationError(f"{url} answered HTTP {response.status_code}: {detail} (check "
                              "--endpoint, --model and the key in --api-key-env)")  # fmt: skip
    try:
        content = response.json()["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise GenerationError(f"{url} did not answer a chat completion "
                              f"(choices[0].message.content): {exc!r}; is it an "
                              "OpenAI-compatible /chat/completions endpoint?") from exc  # fmt: skip
    return content


def parse_reply(content: str) -> tuple[str, list[str]] | None:
    """``(question, quotes)`` from a model's message, or ``None`` when it is not the JSON
    asked for (a fenced code block around it is accepted)."""
    fenced = _FENCE.match(content)
    try:
        data = json.loads(fenced.group(1) if fenced else content)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    question, quotes = data.get("question"), data.get("quotes")
    if isinstance(quotes, str):
        quotes = [quotes]
    if not isinstance(question, str) or not question.strip() or not isinstance(quotes, list):
        return None
    kept = [q for q in quotes if isinstance(q, str) and q.strip()]
    return (question.strip(), kept) if kept else None
