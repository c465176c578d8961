"""Judge specs: TOML files in ``judges/`` naming a rubric and one or more judge models.

::

    name = "ensemble"
    rubric = "rubric-v1.md"        # relative to the spec file
    # call_rubric = "rubric-call.md" # for whole simulated calls (default: the built-in one)

    [[judges]]
    provider = "openai"            # openai | anthropic | openai-compatible | local | a plug-in
    model = "gpt-4o-mini"
    family = "openai"              # a judge rates no contestant of its own family...
    api_key_env = "OPENAI_API_KEY" # the variable's name, never the key
    # base_url = "http://127.0.0.1:8000/v1"   # openai-compatible (required) or openai
    # smoke = true                 # an offline smoke judge: quality figures mean nothing
    # rates_own_family = true      # ...unless exempt: its card on that family is shown
    # method = "calibrated-letter" # local smoke judges: debiased one-letter answers
    # method = "letter-margin"     # one letter's log-probabilities, both orders summed
    # history_turns = 4, phrasings = 3, ask_dimensions = true   # letter-margin settings
    # method = "pointwise"         # each reply alone, Yes/No margins; questions = ["overall"]
    # method = "checklist"         # each reply alone, Yes/No margins weighed (fitted on dev):
    # weights = {attuned = 0.8, fixes = -0.4, likelihood = 0.1}   # question name -> weight
    # method = "scorer"            # each reply scored by a head fitted on read pairs
    # head = "local-scorer.npz"    # (voicebench judge-train writes it; model = "all-minilm-l6-v2")
    # max_tokens = 400, timeout_s = 120, max_attempts = 5, parse_retries = 2, n_ctx = 2048

Several ``[[judges]]`` make an ensemble: each pair is judged by every judge of a family other
than both contestants', and their decisions are combined by majority.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from voicebench import builtin
from voicebench._model import FrozenModel, read_toml, read_utf8, validate_record
from voicebench.errors import InputError, MissingSecretError
from voicebench.judging.methods import TUNING, get_method
from voicebench.judging.questions import LIKELIHOODS
from voicebench.llm import Endpoint, RetryPolicy, get_provider
from voicebench.llm.endpoint import warn_if_sent_away

CALL_RUBRIC = "rubric-call.md"
"""The built-in rubric for whole calls, in ``judges/``."""


class JudgeModelSpec(Endpoint):
    """One judge model: an endpoint (``voicebench.llm.Endpoint``) with the judge-only settings
    below."""

    family: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    """Model family, compared with the contestants' families."""
    smoke: bool = False
    """An offline smoke judge: it exercises the path, its quality figures mean nothing."""
    method: str = "structured"
    """A registered judge method (``voicebench.judging.methods``). ``structured``: the judge
    writes the JSON answer. ``calibrated-letter`` (smoke judges
    on ``local`` only): one token, A or B, whose log-probabilities are compared with those the
    same prompt gets when both replies are blanked out; each order is decided alone.
    ``letter-margin`` (providers that return log-probabilities: ``local``, ``openai``,
    ``openai-compatible`` servers such as llama.cpp or vLLM): one token, A or B; each order
    records the margin log P(A) - log P(B), and a pair is decided by the sum of its two orders'
    margins for the same contestant, which cancels a preference for a slot and decides every
    pair the judge answered (see ``voicebench.judging.combine``). ``pointwise`` (the same
    providers): each reply is asked about alone, Yes or No, and the pair goes to the reply
    whose mean Yes-over-No margin is higher (``voicebench.judging.logprob``). ``checklist``
    (the same providers): as pointwise, each question's margin weighed by ``weights``
    (fitted on the gold set's dev pairs by ``benchmarks/fit_checklist.py``)."""
    history_turns: int | None = Field(default=None, ge=1, le=100)
    """letter-margin and pointwise: show only the last N turns of the conversation (all when
    unset)."""
    questions: tuple[str, ...] = ("overall",)
    """pointwise: which questions each reply is asked (names in
    ``voicebench.judging.questions.QUESTIONS``); its score is their mean."""
    weights: dict[str, float] | None = None
    """checklist (required there): question name -> weight; a reply's score is the weighed
    sum of its Yes-over-No margins (each turned so that Yes is good), and of its
    ``likelihood`` or ``likelihood_mean`` when named (``voicebench.judging.questions``). The
    verdicts record every question's margin, so new weights are applied to verdicts already
    asked."""
    head: str | None = Field(default=None, min_length=1)
    """scorer (required there): the fitted head (``.npz``, written by ``voicebench
    judge-train``), relative to the spec; the loaded spec holds its full path."""
    phrasings: int = Field(default=1, ge=1, le=3)
    """letter-margin: ask the question in this many phrasings and average the margins."""
    ask_dimensions: bool = False
    """letter-margin: also ask about each HEART dimension; the overall margin is the mean of
    every question's, and each dimension is marked from its own margin."""
    in_process: bool = True
    """Local log-probability judges (letter-margin, pointwise, checklist): load the model in
    the judging process, computing only the next token's logits (``voicebench.judging
    .runtime``); false asks the llama.cpp server instead. The answers are the same."""
    rates_own_family: bool = False
    """Exempt from the family rule: the judge also rates contestants of its own family (the
    checklist judge shares a family with the demo's second agent). Where it did, each such
    contestant is marked and the judge's card on the gold pairs with a reply of that family is
    shown beside it, since a judge may favour its own family's style
    (``voicebench.judging.families``)."""
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

    @field_validator("method")
    @classmethod
    def _known_method(cls, name: str) -> str:
        # (named apart from Endpoint's provider check, which a same-named one would replace)
        get_method(name)  # a ValueError naming the known methods
        return name

    @model_validator(mode="after")
    def _judge_fields(self) -> JudgeModelSpec:
        method = get_method(self.method)
        if method.smoke_only and not (self.smoke and self.provider == "local"):
            raise ValueError(f"method {self.method!r} is for local smoke judges only")
        if method.logprobs and not get_provider(self.provider).wire_api.logprobs:
            raise ValueError(
                f"method {self.method!r} needs log-probabilities, which provider "
                f"{self.provider!r} does not return"
            )
        self._check_questions()
        if (self.head is None) == (self.method == "scorer"):
            raise ValueError(
                "method 'scorer' needs a head (the .npz file judge-train writes)"
                if self.head is None
                else f"head is a setting of method 'scorer', not of {self.method!r}"
            )
        tuned = self.history_turns is not None or self.phrasings != 1 or self.ask_dimensions
        if tuned and not method.tuned:
            raise ValueError(
                f"{', '.join(TUNING[:-1])} and {TUNING[-1]} are settings of a method that takes "
                f"them (letter-margin), not of {self.method!r}"
            )
        return self

    def _check_questions(self) -> None:
        method = get_method(self.method)
        if method.weighed and self.weights is None:
            raise ValueError(f"method {self.method!r} needs weights")
        if self.weights is not None and not method.weighed:
            raise ValueError(
                f"weights is a setting of a weighed method (checklist), not of {self.method!r}"
            )
        asked = method.asked(self)
        known = method.questions()
        unknown = [q for q in asked if q not in known]
        if not asked or unknown:
            raise ValueError(
                f"unknown questions {unknown}; choose from {', '.join(known)}"
                if unknown
                else "at least one question is needed"
            )
        read = [f for f in LIKELIHOODS if f in asked]
        if read and not (self.provider == "local" and self.in_process):
            raise ValueError(
                f"{read[0]!r} reads the reply's own log-probabilities, which only a local "
                "judge loaded in process (provider 'local', in_process = true) gives"
            )

    @property
    def loaded_in_process(self) -> bool:
        """A local log-probability judge whose model the judging process loads: it answers one
        prompt at a time, reusing the last prompt's evaluated prefix."""
        method = get_method(self.method)
        return self.provider == "local" and self.in_process and method.logprobs

    @property
    def asked(self) -> tuple[str, ...]:
        """pointwise and checklist: the questions each reply is asked."""
        return get_method(self.method).asked(self)

    @property
    def cache_id(self) -> str:
        """The judge as its verdicts' cache keys know it: its id and method variant."""
        return f"{self.id}#{self.variant}" if self.variant else self.id

    @property
    def variant(self) -> str:
        """The method's settings where they change what the judge is asked ("" for the
        default structured judge), part of every verdict's cache key."""
        return get_method(self.method).variant(self)

    @property
    def retry(self) -> RetryPolicy:
        """How its requests are retried."""
        return RetryPolicy(max_attempts=self.max_attempts, parse_retries=self.parse_retries)


class JudgeSpec(FrozenModel):
    """A judge spec file."""

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    rubric: str = Field(min_length=1)
    """The rubric file, relative to the spec."""
    call_rubric: str = Field(default=CALL_RUBRIC, min_length=1)
    """The rubric for whole calls (``voicebench converse`` folders), relative to the spec;
    the built-in one when the default name is not next to the spec."""
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


def load_judge_spec(
    path: str | Path, *, require_secrets: bool = True, unit: Literal["reply", "call"] = "reply"
) -> tuple[JudgeSpec, Rubric]:
    """Read a judge spec (a path, or a shipped spec's name) and its rubric for ``unit`` (the
    final reply of an item, or a whole simulated call); a missing key variable fails here,
    naming it."""
    path = builtin.spec_path("judges", path)
    data = read_toml(path)
    spec = validate_record(JudgeSpec, data, file=path)
    spec = _with_heads(spec, path)
    for i, judge in enumerate(spec.judges):
        var = judge.api_key_env
        if require_secrets and var and not os.environ.get(var):
            raise MissingSecretError(path, f"judges.{i}.api_key_env", var)
        warn_if_sent_away(var, judge.url, judge.provider, file=path, field=f"judges.{i}.base_url")
    if unit == "call":
        fallback = builtin.JUDGES / CALL_RUBRIC if spec.call_rubric == CALL_RUBRIC else None
        return spec, _rubric(path, spec.call_rubric, "call_rubric", fallback)
    return spec, _rubric(path, spec.rubric, "rubric", None)


def _with_heads(spec: JudgeSpec, path: Path) -> JudgeSpec:
    """The spec with each scorer's head as a full path, checked to be there."""
    judges = []
    for i, judge in enumerate(spec.judges):
        if judge.head is not None:
            head = (path.parent / judge.head).resolve()
            if not head.is_file():
                raise InputError(
                    f"head file {judge.head!r} not found next to the spec",
                    file=path,
                    field=f"judges.{i}.head",
                )
            judge = judge.model_copy(update={"head": str(head)})
        judges.append(judge)
    return spec.model_copy(update={"judges": tuple(judges)})


def _rubric(spec_path: Path, name: str, field: str, fallback: Path | None) -> Rubric:
    try:
        rubric_path = (spec_path.parent / name).resolve()
        found = rubric_path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        found = False
    if not found and fallback is not None:
        rubric_path, found = fallback, fallback.is_file()
    if not found:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise InputError(
            f"rubric file {shown!r} not found next to the spec", file=spec_path, field=field
        )
    text = read_utf8(rubric_path)
    if not text.strip():
        raise InputError("rubric is empty", file=rubric_path)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Rubric(path=str(rubric_path), text=text, sha256=digest)
