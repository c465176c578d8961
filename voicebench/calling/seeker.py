"""The simulated seeker: an LLM playing a persona card on a call with the agent.

The seeker is given its card and the call so far as it heard it (the agent's replies as
transcribed from their audio, never their text) and asked for its next line. Each line is
checked for staying in role (``role_break``: speaking as the supporter, saying an earlier line
again...); a line that breaks role is asked for again, and a call whose seeker broke role
``MAX_ROLE_BREAKS`` times is invalid. Every request is cached by
its content (``SeekerCache``), so the same seed, model and settings give the same lines for the
same agent replies, and a resumed call asks nothing twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from voicebench._jsonl import append_record, json_lines
from voicebench._model import FrozenModel, read_toml, validate_record
from voicebench.calling.roles import END_MARK, cut_to_length, role_break
from voicebench.dialogues.personas import Persona
from voicebench.errors import MissingFileError, RunError
from voicebench.llm import Endpoint, get_provider
from voicebench.llm.chat import chat_client, completion_client
from voicebench.llm.connect import Connection, connect
from voicebench.llm.registry import AnswerFormat
from voicebench.llm.retry import ChatClient, RetryPolicy, ask_parsed

MAX_ROLE_BREAKS = 2
"""Role breaks that make a call invalid."""
INTENSITY_WORDS = {1: "mildly", 2: "somewhat", 3: "clearly", 4: "strongly", 5: "overwhelmingly"}
RESISTANCE = {
    "always-10": "You are hostile from the first word: you doubt this call can help and say so.",
    "linear-ramp": "You start polite and grow more irritated with every answer that does not "
    "land, until you are openly fed up.",
    "mid-spike": "You are calm at first, then snap sharply at the first suggestion that you "
    "do something, and cool down only slowly.",
    "mid-ramp": "You are calm at first; from the middle of the call you grow more and more "
    "frustrated with advice that feels out of touch.",
}

SYSTEM = """\
You write the lines of a caller on an emotional support phone line, one line at a time. You
are always the caller, never the supporter and never an assistant.

Who the caller is: {who}
What happened: {what_happened}
How they feel: {intensity} {emotion} (intensity {level} of 5) as the call begins.
What they want from this call: {wants}
How they talk: {style}{resistance}
They would hang up: {hangs_up}

Write only the caller's next words, in the first person, as said aloud on the phone: no name
or label in front, no actions or feelings in brackets or asterisks, no quotation marks, at
most {words} words. React to what the supporter just said."""

TURN = """The call so far:
{transcript}

Continue the transcript with the caller's line {n} only, in their own words.{ending}
Caller:"""
EARLY = " It is too early to end the call."
MAY_END = (
    " If the caller is ready to end the call, or would hang up, they say goodbye in their own "
    "words and you put {end} at the very end."
)
CUT_IN = "(starts to answer, and the caller cuts in before they finish)"
"""What the transcript shows for a reply the caller talks over (a barge-in)."""
MIN_LINES = 3
"""The caller's lines before it may say goodbye (unless the call reaches its limit sooner)."""

REPORT = """The call so far:
{transcript}

The call is over. As the caller, say how it went, as JSON with these fields: intensity_before
(1-5: how strong the feeling was when they called), intensity_after (1-5: how strong it is
now), felt_heard (1-5: how much they felt heard), would_call_again (true or false)."""

REASK = "That line broke the role: {why}. Write only the caller's own next words."
NOT_THIS = '\n(Not "{line}": that is {why}.)'
"""A broken line named in a completion prompt asked again."""

REPORT_FORMAT = AnswerFormat(
    name="caller_report",
    schema={
        "type": "object",
        "properties": {
            "intensity_before": {"type": "integer", "minimum": 1, "maximum": 5},
            "intensity_after": {"type": "integer", "minimum": 1, "maximum": 5},
            "felt_heard": {"type": "integer", "minimum": 1, "maximum": 5},
            "would_call_again": {"type": "boolean"},
        },
        "required": ["intensity_before", "intensity_after", "felt_heard", "would_call_again"],
        "additionalProperties": False,
    },
)


class SeekerSpec(FrozenModel):
    """The LLM that plays the seeker (a TOML file with an ``[llm]`` table, and ``method``)."""

    name: str = Field(default="seeker", min_length=1)
    llm: Endpoint
    """Its endpoint; a line is one answer, so ``max_tokens`` bounds a line's length too."""
    method: Literal["chat", "completion"] = "chat"
    """``chat``: the card and the call are a chat request, the line its answer, a line that
    broke role answered with why and asked again. ``completion`` (providers with the OpenAI
    API: local, openai-compatible servers): the same text as one prompt ending ``Caller:``,
    continued up to the end of the line, a broken line named in the prompt when asked again.
    A small chat model continues a transcript as the caller far more often than it answers
    as one (it is trained to answer as an assistant)."""
    again_temperature: float = Field(default=0.8, ge=0.0, le=2.0)
    """A line asked for again after one broke role is sampled at this temperature (seeded
    with the run's seed where the provider takes one): at temperature 0 a model that looped
    or refused tends to say the same again."""

    @model_validator(mode="after")
    def _completion_api(self) -> SeekerSpec:
        if self.method == "completion" and not get_provider(self.llm.provider).wire_api.completions:
            raise ValueError(
                f"method 'completion' needs a provider with the OpenAI API, not "
                f"{self.llm.provider!r}"
            )
        return self


DEFAULT_SEEKER = SeekerSpec(
    name="local-seeker",
    llm=Endpoint(
        provider="local",
        model="qwen2.5-coder-1.5b",
        temperature=0.0,
        max_tokens=100,
        n_ctx=4096,
    ),
    method="completion",
)
"""The offline seeker: the packaged Qwen2.5-Coder-1.5B on llama.cpp, continuing the call's
transcript."""


def load_seeker_spec(path: str | Path | None) -> SeekerSpec:
    """A seeker spec from a TOML file; None: the offline default."""
    if path is None:
        return DEFAULT_SEEKER
    path = Path(path)
    if not path.exists():
        raise MissingFileError("seeker spec", path)
    return validate_record(SeekerSpec, read_toml(path), file=path)


class CallerReport(FrozenModel):
    """What the seeker says of the call at its end, in character."""

    intensity_before: int = Field(ge=1, le=5)
    intensity_after: int = Field(ge=1, le=5)
    felt_heard: int = Field(ge=1, le=5)
    would_call_again: bool


def system_prompt(card: Persona) -> str:
    style = "a sentence or two at a time" if card.turn_length == "short" else "a few sentences"
    if card.hesitant:
        style += ", with hesitations (um, I don't know) and trailing off"
    resistance = f"\n{RESISTANCE[card.resistance.value]}" if card.resistance else ""
    return SYSTEM.format(
        who=card.who,
        what_happened=card.what_happened,
        intensity=INTENSITY_WORDS[card.intensity],
        emotion=card.emotion,
        level=card.intensity,
        wants=card.wants,
        style=style + ".",
        resistance=resistance,
        hangs_up=card.hangs_up,
        words=card.max_words,
    )


def transcript(greeting: str, exchanges: list[tuple[str, str]]) -> str:
    """The call as the caller heard it, one labelled line per turn."""
    lines = [f"Supporter: {greeting}"]
    for said, heard in exchanges:
        lines.append(f"Caller: {said}")
        lines.append(f"Supporter: {heard or '(says nothing)'}")
    return "\n".join(lines)


def call_messages(
    card: Persona,
    greeting: str,
    exchanges: list[tuple[str, str]],
    refused: Sequence[tuple[str, str]] = (),
) -> list[dict[str, str]]:
    """The seeker's request: its card, then the call so far as it heard it (the greeting, each
    of its own lines and the agent's reply as transcribed) and which line to write; each of
    ``refused`` ((line, why it broke role)) named as not the line wanted."""
    n = len(exchanges) + 1
    ending = EARLY if n < MIN_LINES else MAY_END.format(end=END_MARK)
    ending += "".join(
        NOT_THIS.format(line=" ".join(line.split()), why=why) for line, why in refused
    )
    return [
        {"role": "system", "content": system_prompt(card)},
        {
            "role": "user",
            "content": TURN.format(transcript=transcript(greeting, exchanges), n=n, ending=ending),
        },
    ]


class SeekerCache:
    """The seeker's answers by the content of the request (``OUT/seeker-cache.jsonl``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._answers: dict[str, str] = {}
        for _, data in json_lines(path):
            if isinstance(data, dict):
                self._answers[str(data.get("key"))] = str(data.get("text", ""))

    @staticmethod
    def key(
        spec: SeekerSpec, seed: int, messages: list[dict[str, str]], again: bool = False
    ) -> str:
        what: dict = {"llm": spec.llm.model_dump(mode="json"), "seed": seed, "messages": messages}
        if again:  # asked again by sampling, at the spec's again_temperature
            what["again"] = spec.again_temperature
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        return self._answers.get(key)

    def put(self, key: str, text: str) -> None:
        self._answers[key] = text
        append_record(self.path, _Cached(key=key, text=text))


class _Cached(FrozenModel):
    key: str
    text: str


class SeekerError(RunError):
    """The seeker's LLM gave no line (its failures exhausted the retries)."""


@dataclass(frozen=True)
class SeekerLine:
    """The seeker's next line, and the lines it broke role with on the way."""

    text: str
    """As asked for (with the end mark, if any)."""
    breaks: tuple[str, ...]
    """Why each refused line broke role, in order."""
    cut: bool = False
    """It was over the card's word cap, and cut to its first sentences."""


class Seeker:
    """One persona's caller, asking an LLM through ``client`` for each line."""

    def __init__(
        self,
        spec: SeekerSpec,
        client: ChatClient,
        cache: SeekerCache,
        *,
        reporter: ChatClient | None = None,
        again: ChatClient | None = None,
        seed: int = 0,
    ) -> None:
        """``client`` asks for lines (free text); ``again`` for a line asked again after one
        broke role (sampling at ``spec.again_temperature``; default: ``client``); ``reporter``
        for the end report (the ``REPORT_FORMAT`` JSON; default: ``client``)."""
        self.spec, self._client, self._cache, self._seed = spec, client, cache, seed
        self._reporter, self._again = reporter or client, again or client

    async def _ask(self, messages: list[dict[str, str]], *, again: bool = False) -> str:
        key = SeekerCache.key(self.spec, self._seed, messages, again)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        client = self._again if again else self._client
        asked = await ask_parsed(client, messages, lambda text: text, RetryPolicy())
        if asked.value is None:
            raise SeekerError(f"the seeker's LLM failed: {asked.failure}")
        self._cache.put(key, asked.value)
        return asked.value

    async def next_line(
        self, card: Persona, greeting: str, exchanges: list[tuple[str, str]], breaks_left: int
    ) -> SeekerLine:
        """The next line, cut to the card's word cap at a sentence's end; a line out of role
        (``role_break``: one that says an earlier line again among them, as a model at
        temperature 0 facing the same answer does) is asked for again, by sampling, while
        ``breaks_left`` allows (each refusal is added to the request, so it is cached too)."""
        messages = call_messages(card, greeting, exchanges)
        earlier = [said for said, _ in exchanges]
        breaks: list[str] = []
        refused: list[tuple[str, str]] = []
        while True:
            asked = (await self._ask(messages, again=bool(breaks))).strip()
            text = cut_to_length(asked, card)
            why = role_break(text, card, earlier)
            if why is None:
                return SeekerLine(text, tuple(breaks), cut=text != asked)
            breaks.append(why)
            if len(breaks) >= breaks_left:
                return SeekerLine(text, tuple(breaks))
            if self.spec.method == "completion":
                refused.append((text, why))
                messages = call_messages(card, greeting, exchanges, refused)
                continue
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": REASK.format(why=why)},
            ]

    async def report(
        self, card: Persona, greeting: str, exchanges: list[tuple[str, str]]
    ) -> CallerReport | None:
        """The seeker's own account of the call, asked in character (None if it never gave
        one that parses)."""
        messages = [
            {"role": "system", "content": system_prompt(card)},
            {"role": "user", "content": REPORT.format(transcript=transcript(greeting, exchanges))},
        ]
        key = SeekerCache.key(self.spec, self._seed, messages)
        cached = self._cache.get(key)
        if cached is not None:
            with contextlib.suppress(ValueError):
                return _parse_report(cached)
        asked = await ask_parsed(self._reporter, messages, _parse_report, RetryPolicy())
        if asked.value is None:
            return None
        self._cache.put(key, asked.value.model_dump_json())
        return asked.value


def _parse_report(text: str) -> CallerReport:
    match = re.search(r"\{.*\}", text, re.S)
    if match is None:
        raise ValueError("no JSON object in the answer")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None
    try:
        return CallerReport.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError is a ValueError too
        raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class SeekerClients:
    """The clients a seeker asks, sharing one connection (and a local model's one server)."""

    lines: ChatClient
    """Each line, by the spec's method."""
    again: ChatClient
    """A line asked again, sampled at ``again_temperature``."""
    report: ChatClient
    """The end report (``REPORT_FORMAT``)."""


async def open_seeker(
    spec: SeekerSpec, stack: contextlib.AsyncExitStack, *, seed: int = 0
) -> SeekerClients:
    """Ready clients for ``spec``'s LLM."""
    conn = await connect(spec.llm, stack)
    sampled = dataclasses.replace(
        conn, endpoint=spec.llm.model_copy(update={"temperature": spec.again_temperature})
    )

    def ask(c: Connection) -> ChatClient:
        if spec.method == "completion":
            return completion_client(c, stack, stop=["\n"], seed=seed)
        return chat_client(c, stack)

    return SeekerClients(ask(conn), ask(sampled), chat_client(conn, stack, REPORT_FORMAT))
