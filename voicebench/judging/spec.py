"""Judge specs: TOML files in ``judges/`` naming a rubric and one or more judge models.

::

    name = "ensemble"
    rubric = "rubric-v1.md"        # relative to the spec file

    [[judges]]
    provider = "openai"            # openai | anthropic | openai-compatible | local | a plug-in
    model = "gpt-4o-mini"
    family = "openai"              # a judge never rates a contestant of its own family
    api_key_env = "OPENAI_API_KEY" # the variable's name, never the key
    # base_url = "http://127.0.0.1:8000/v1"   # openai-compatible (required) or openai
    # smoke = true                 # an offline smoke judge: quality figures mean nothing
    # rates_own_family = true      # smoke judges only: exempt from the family rule
    # method = "calibrated-letter" # local smoke judges: debiased one-letter answers
    # max_tokens = 400, timeout_s = 120, max_attempts = 5, parse_retries = 2, n_ctx = 2048

Several ``[[judges]]`` make an ensemble: each pair is judged by every judge of a family other
than both contestants', and their decisions are combined by majority.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from voicebench._model import FrozenModel, read_utf8, validate_record
from voicebench.errors import InputError, MissingSecretError
from voicebench.llm import Endpoint, RetryPolicy


class JudgeModelSpec(Endpoint):
    """One judge model: an endpoint (``voicebench.llm.Endpoint``) with the judge-only settings
    below."""

    family: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    """Model family, compared with the contestants' families."""
    smoke: bool = False
    """An offline smoke judge: it exercises the path, its quality figures mean nothing."""
    method: Literal["structured", "calibrated-letter"] = "structured"
    """``structured``: the judge writes the JSON answer. ``calibrated-letter`` (smoke judges
    on ``local`` only): one token, A or B, whose log-probabilities are compared with those the
    same prompt gets when both replies are blanked out, which cancels a small model's
    preference for a slot; only the overall winner and a strength come out of it."""
    rates_own_family: bool = False
    """Smoke judges only: exempt from the family rule (the one offline model is also the
    default agent's). Never allowed for a judge whose verdicts are meant to count."""
    temperature: float = Field(default=0.0, ge=0.0, le=0.0)
    """Always 0: judging must be as repeatable as the provider allows."""
    max_tokens: int = Field(default=400, ge=32, le=4000)
    timeout_s: float | None = Field(default=120.0, gt=0.0, le=900.0)
    """Per request."""
    max_attempts: int = Field(default=5, ge=1, le=20)
    """Requests per verdict for rate limits, 5xx and timeouts (backoff between them)."""
    parse_retries: int = Field(default=2, ge=0, le=10)
    """Extra requests when an answer cannot be parsed, before the verdict is recorded as failed."""
    n_ctx: int = Field(default=4096, ge=512, le=131072)
    """Local only: context window of the llama.cpp server."""

    @model_validator(mode="after")
    def _judge_fields(self) -> JudgeModelSpec:
        if self.method == "calibrated-letter" and not (self.smoke and self.provider == "local"):
            raise ValueError("method 'calibrated-letter' is for local smoke judges only")
        if self.rates_own_family and not self.smoke:
            raise ValueError("rates_own_family is allowed only for a smoke judge (smoke = true)")
        return self

    @property
    def retry(self) -> RetryPolicy:
        """How its requests are retried."""
        return RetryPolicy(max_attempts=self.max_attempts, parse_retries=self.parse_retries)


class JudgeSpec(FrozenModel):
    """A judge spec file."""

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    rubric: str = Field(min_length=1)
    """The rubric file, relative to the spec."""
    judges: tuple[JudgeModelSpec, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct(self) -> JudgeSpec:
        ids = [j.id for j in self.judges]
        if len(set(ids)) != len(ids):
            raise ValueError("the same judge model is listed twice")
        return self

    @property
    def smoke(self) -> bool:
        return any(j.smoke for j in self.judges)


class Rubric(FrozenModel):
    path: str
    text: str
    sha256: str


def load_judge_spec(path: str | Path, *, require_secrets: bool = True) -> tuple[JudgeSpec, Rubric]:
    """Read a judge spec and its rubric; a missing key variable fails here, naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(read_utf8(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", file=path) from None
    spec = validate_record(JudgeSpec, data, file=path)
    for i, judge in enumerate(spec.judges):
        var = judge.api_key_env
        if require_secrets and var and not os.environ.get(var):
            raise MissingSecretError(path, f"judges.{i}.api_key_env", var)
    try:
        rubric_path = (path.parent / spec.rubric).resolve()
        found = rubric_path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        found = False
    if not found:
        name = spec.rubric if len(spec.rubric) <= 80 else spec.rubric[:77] + "..."
        raise InputError(
            f"rubric file {name!r} not found next to the spec", file=path, field="rubric"
        )
    text = read_utf8(rubric_path)
    if not text.strip():
        raise InputError("rubric is empty", file=rubric_path)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return spec, Rubric(path=str(rubric_path), text=text, sha256=digest)
