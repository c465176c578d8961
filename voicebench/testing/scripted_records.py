"""What the scripted LLM server logs and says: its faults, its request-log record, and the
reply it derives from the last user message (see ``voicebench.testing.scripted_llm``)."""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import Field

from voicebench._model import FrozenModel

Fault = Literal["429", "500", "hang", "empty", "truncate"]
FAULTS: tuple[str, ...] = get_args(Fault)

_TOKEN_RE = re.compile(r"\s*\S+|\s+")
_REFLECT = {
    "i": "you",
    "i'm": "you're",
    "im": "you're",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "am": "are",
    "was": "were",
}
_DANGLING = {
    "and",
    "but",
    "or",
    "so",
    "because",
    "the",
    "a",
    "an",
    "to",
    "of",
    "with",
    "that",
    "you",
    "your",
    "is",
    "are",
    "were",
    "just",
    "really",
    "very",
    "in",
    "on",
    "at",
}


class RequestRecord(FrozenModel):
    """One line of the request log: one chat-completions request."""

    received_ns: int
    """perf_counter_ns when the request's last bytes reached the server's socket (the kernel's
    arrival stamp; where there is none, when the handler began): the time to first token
    counts from here."""
    first_token_sent_ns: int | None
    """perf_counter_ns when the first content chunk (or the whole reply) was written; null if
    none."""
    done_ns: int
    """perf_counter_ns when the request ended (finished, failed or abandoned)."""
    model: str = Field(min_length=1)
    """The model the client asked for."""
    n_messages: int = Field(ge=0)
    """How many messages the request carried."""
    stream: bool
    """Whether the client asked for a stream."""
    fault: Fault | None = None
    """The scripted fault this request got, if any."""

    @property
    def ttft_ms(self) -> float | None:
        """Server-side time to first token in milliseconds."""
        if self.first_token_sent_ns is None:
            return None
        return (self.first_token_sent_ns - self.received_ns) / 1e6


def tokenize(text: str) -> list[str]:
    """Word tokens with their leading whitespace; ``"".join(tokenize(t)) == t``."""
    return _TOKEN_RE.findall(text)


def supportive_reply(messages: list[dict[str, Any]]) -> str:
    """Two sentences that echo the first words of the last user message, mirrored to 'you'."""
    text = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content") or ""
            if isinstance(content, list):  # multimodal form: [{"type": "text", "text": ...}]
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            text = str(content)
            break
    clause = re.split(r"[.,!?;:]", text.strip(), maxsplit=1)[0]
    words = [_REFLECT.get(w.lower(), w) for w in clause.strip("\"'()").split()][:6]
    while words and words[-1].lower() in _DANGLING:  # "...today and?" reads as cut off
        words.pop()
    topic = f"how {' '.join(words)}" if words else "how you are feeling"
    return f"That sounds really hard. Can you tell me more about {topic}?"


def error_body(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def first_token_logprobs(tokens: list[str], tops: dict[str, float] | None) -> dict | None:
    """An OpenAI ``logprobs`` object giving the first token the scripted top log-probabilities."""
    if tops is None or not tokens:
        return None
    top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in tops.items()]
    first = tops.get(tokens[0].strip(), min(tops.values(), default=0.0))
    return {"content": [{"token": tokens[0], "logprob": first, "bytes": None, "top_logprobs": top}]}
