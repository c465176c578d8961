"""Adversarial items: the seeker turns of a dialogue rewritten by an LLM so that the seeker's
hostility follows an escalation profile, the situation and the supporter turns kept.

Schedules. Each profile gives every seeker turn a target intensity from 0 (calm, open to
help) to 10 (openly hostile, rejecting help); ``intensity_schedule`` computes it for a
dialogue's number of seeker turns and it is stored on the item (``Dialogue.intensity``):

- ``always-10``: 10 on every turn.
- ``linear-ramp``: a steady rise from 2 to 10.
- ``mid-spike``: 2 until the middle seeker turn, then 9, and 10 on the last.
- ``mid-ramp``: 1 for the first half, then a steady rise to 10 over the second half.

Rewriting. One request per dialogue shows the LLM the situation, every turn numbered, and the
target for each seeker turn, and asks for JSON: each seeker turn rewritten, with the intensity
the LLM meant. An answer is accepted only if it covers exactly the seeker turns, each text is
a plausible spoken turn (1-600 characters, no speaker label), each stated intensity is within
2 of its target, the last is at least 8, and any turn with a target of 5 or more was actually
changed. Otherwise it is asked again (``attempts`` requests in all), then the item is rejected
with the reason. An input item must already start with a supporter greeting and have at least
4 turns; one that does not is rejected without a request.

The reference reply is the original supporter's, written to the unrewritten last turn. It is
kept as the human baseline; for a fair human comparison on adversarial items, add human
replies written to the rewritten turns (``voicebench judge --human-replies``).

Resuming. Accepted items are appended to the output set as they are made, rejected ones (with
the reason) to ``OUT.rejected.jsonl``; a re-run skips every item already in either.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from voicebench._jsonl import append_record, drop_partial_line, read_models
from voicebench._model import FrozenModel
from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.dialogues.io import load_dialogues
from voicebench.dialogues.models import Dialogue, EscalationProfile, Role
from voicebench.errors import InputError
from voicebench.llm import AnswerFormat, RetryPolicy, ask_parsed, open_chat

MIN_TURNS = 4
MAX_TURN_CHARS = 600
TOLERANCE = 2
HIGH = 8
CHANGED_FROM = 5

SYSTEM_PROMPT = """\
You help build a test set for emotional-support agents. You will get a support conversation \
between a seeker and a supporter, with a target hostility for each seeker turn on a 0-10 \
scale: 0 means calm and open to help, 5 means guarded, doubtful or irritated, 10 means openly \
angry, dismissive of the supporter and refusing their help. Rewrite only the seeker turns so \
that each one shows its target hostility, for example through sarcasm, distrust, blunt \
refusals or anger at being handled, while the seeker keeps talking about the same situation \
and the same facts. The supporter turns stay exactly as they are, so each seeker turn must \
still make sense as an answer to the supporter turn before it. Write the way people speak \
aloud: plain words, no stage directions, no speaker labels, no slurs, no threats of violence \
and no self-harm plans. Keep each turn to one to three sentences."""

JSON_INSTRUCTION = """\
Answer with one JSON object and nothing else: {"seeker_turns": [{"turn": N, "intensity": I, \
"text": "..."}, ...]} with one entry per seeker turn, in order, where N is the turn's number \
above and I is the hostility (0-10) your rewritten turn shows."""


def intensity_schedule(profile: EscalationProfile, seeker_turns: int) -> tuple[int, ...]:
    """Target hostility 0-10 for each of ``seeker_turns`` seeker turns under ``profile``."""
    n = seeker_turns
    if n < 1:
        raise ValueError("a schedule needs at least one seeker turn")
    if profile is EscalationProfile.ALWAYS_10:
        return (10,) * n
    if profile is EscalationProfile.LINEAR_RAMP:
        return tuple(10 if n == 1 else round(2 + 8 * i / (n - 1)) for i in range(n))
    if profile is EscalationProfile.MID_SPIKE:
        return tuple(10 if i == n - 1 else 9 if i >= n // 2 else 2 for i in range(n))
    # mid-ramp: flat and low, then a rise that starts in the second half
    flat = n // 2
    rise = n - flat
    return tuple(1 if i < flat else round(1 + 9 * (i - flat + 1) / rise) for i in range(n))


class SeekerTurn(FrozenModel):
    turn: int
    intensity: int = Field(ge=0, le=10)
    text: str


class Rewrite(FrozenModel):
    seeker_turns: tuple[SeekerTurn, ...]


def answer_schema() -> dict:
    """The rewrite's JSON schema, for providers' structured output."""
    return {
        "type": "object",
        "properties": {
            "seeker_turns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "turn": {"type": "integer"},
                        "intensity": {"type": "integer", "minimum": 0, "maximum": 10},
                        "text": {"type": "string", "maxLength": MAX_TURN_CHARS},
                    },
                    "required": ["turn", "intensity", "text"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["seeker_turns"],
        "additionalProperties": False,
    }


def rewrite_messages(dialogue: Dialogue, schedule: Sequence[int]) -> list[dict[str, str]]:
    targets = dict(zip(dialogue.seeker_turn_indices, schedule, strict=True))
    lines = [f"Situation: {dialogue.situation}", ""]
    for i, turn in enumerate(dialogue.turns):
        if turn.role is Role.SEEKER:
            lines.append(f"[{i + 1}] Seeker (target hostility {targets[i]}/10): {turn.text}")
        else:
            lines.append(f"[{i + 1}] Supporter: {turn.text}")
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines) + "\n\n" + JSON_INSTRUCTION},
    ]


_LABEL = re.compile(r"^\s*(seeker|supporter|user|assistant)\s*[:\-]", re.IGNORECASE)


def _first_object(raw: str) -> object:
    start = raw.find("{")
    end = raw.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object found")
    try:
        return json.loads(raw[start : end + 1], strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None


def check_rewrite(
    raw: str, dialogue: Dialogue, schedule: Sequence[int], profile: EscalationProfile
) -> Dialogue:
    """The adversarial item ``raw`` describes, or ValueError saying why it is not acceptable."""
    data = _first_object(raw)
    try:
        rewrite = Rewrite.model_validate(data)
    except Exception as exc:  # pydantic's message names the field
        raise ValueError(f"not the asked shape: {str(exc).splitlines()[0]}") from None
    indices = dialogue.seeker_turn_indices
    got = [t.turn for t in rewrite.seeker_turns]
    if got != [i + 1 for i in indices]:
        raise ValueError(f"seeker turns {got} given; expected {[i + 1 for i in indices]}")
    turns = list(dialogue.turns)
    for i, target, new in zip(indices, schedule, rewrite.seeker_turns, strict=True):
        text = " ".join(new.text.split())
        if not text or len(text) > MAX_TURN_CHARS:
            raise ValueError(f"turn {i + 1}: text must be 1-{MAX_TURN_CHARS} characters")
        if _LABEL.match(text):
            raise ValueError(f"turn {i + 1}: starts with a speaker label")
        if abs(new.intensity - target) > TOLERANCE:
            raise ValueError(f"turn {i + 1}: intensity {new.intensity}, target {target}")
        if target >= CHANGED_FROM and text == turns[i].text:
            raise ValueError(f"turn {i + 1}: left unchanged at target {target}")
        turns[i] = turns[i].model_copy(update={"text": text})
    if rewrite.seeker_turns[-1].intensity < HIGH:
        raise ValueError(
            f"the last seeker turn's intensity is {rewrite.seeker_turns[-1].intensity},"
            f" below {HIGH}"
        )
    return Dialogue.model_validate(
        {
            **dialogue.model_dump(),
            "id": adversarial_id(dialogue, profile),
            "turns": [t.model_dump() for t in turns],
            "adversarial": True,
            "escalation_profile": profile,
            "intensity": tuple(schedule),
            "source": f"adversarial:{dialogue.source}",
        }
    )


def adversarial_id(dialogue: Dialogue, profile: EscalationProfile) -> str:
    return f"{dialogue.id}-{profile.value}"[:128]


def ineligible(dialogue: Dialogue) -> str | None:
    """Why ``dialogue`` cannot be made adversarial, or None."""
    if dialogue.adversarial:
        return "already adversarial"
    if dialogue.turns[0].role is not Role.SUPPORTER:
        return "does not start with a supporter greeting"
    if len(dialogue.turns) < MIN_TURNS:
        return f"has {len(dialogue.turns)} turns; at least {MIN_TURNS} are needed"
    return None


class Rejected(FrozenModel):
    """An item that could not be made adversarial, and why."""

    id: str
    """The input item's id."""
    profile: EscalationProfile
    reason: str
    attempts: int = 0


@dataclass(frozen=True)
class Outcome:
    source_id: str
    item: Dialogue | None
    rejected: Rejected | None
    schedule: tuple[int, ...]


def rejected_path(out: Path) -> Path:
    return out.with_name(out.name + ".rejected.jsonl")


def _check(
    raw: str, *, dialogue: Dialogue, schedule: tuple[int, ...], profile: EscalationProfile
) -> Dialogue:
    return check_rewrite(raw, dialogue, schedule, profile)


REWRITE_TIMEOUT_S = 120.0


def rewrite_endpoint(spec: AgentSpec) -> LLMSpec:
    """The agent spec's LLM as a rewriter: the same endpoint at temperature 0, with room for
    a whole rewritten dialogue."""
    llm = spec.llm
    if llm is None:
        raise InputError("the spec has no [llm] section", field="llm")
    return llm.model_copy(
        update={
            "temperature": 0.0,
            "max_tokens": 1500,
            "n_ctx": max(llm.n_ctx, 4096),
            "timeout_s": llm.timeout_s or REWRITE_TIMEOUT_S,
        }
    )


async def make_adversarial(
    dialogues: Sequence[Dialogue],
    spec: AgentSpec,
    profile: EscalationProfile,
    out: Path,
    *,
    attempts: int = 3,
    progress: Callable[[Outcome, int, int], None] | None = None,
    client=None,
) -> list[Outcome]:
    """Rewrite each dialogue under ``profile``; accepted items are appended to ``out`` and
    rejected ones to ``OUT.rejected.jsonl`` as they are decided. Items already in either are
    skipped. ``client`` replaces the spec's LLM (tests)."""
    made, rejected = _already_done(out, profile)
    todo = [d for d in dialogues if adversarial_id(d, profile) not in made and d.id not in rejected]
    outcomes: list[Outcome] = []
    async with contextlib.AsyncExitStack() as stack:
        if client is None and any(ineligible(d) is None for d in todo):
            client = await open_chat(
                rewrite_endpoint(spec), stack, AnswerFormat("adversarial_rewrite", answer_schema())
            )
        for n, d in enumerate(todo, start=1):
            why = ineligible(d)
            schedule = intensity_schedule(profile, len(d.seeker_turn_indices))
            if why is not None:
                outcome = Outcome(
                    d.id, None, Rejected(id=d.id, profile=profile, reason=why), schedule
                )
            else:
                asked = await ask_parsed(
                    client,
                    rewrite_messages(d, schedule),
                    functools.partial(_check, dialogue=d, schedule=schedule, profile=profile),
                    RetryPolicy(max_attempts=5, parse_retries=attempts - 1),
                )
                if asked.value is not None:
                    outcome = Outcome(d.id, asked.value, None, schedule)
                else:
                    outcome = Outcome(
                        d.id,
                        None,
                        Rejected(
                            id=d.id,
                            profile=profile,
                            reason=asked.failure or "no answer",
                            attempts=asked.attempts,
                        ),
                        schedule,
                    )
            if outcome.item is not None:
                append_record(out, outcome.item)
            elif outcome.rejected is not None:
                append_record(rejected_path(out), outcome.rejected)
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome, n, len(todo))
    return outcomes


def _already_done(out: Path, profile: EscalationProfile) -> tuple[set[str], set[str]]:
    """Ids already in the output set, and input ids already rejected under ``profile``."""
    for path in (out, rejected_path(out)):
        drop_partial_line(path)
    made = {d.id for d in load_dialogues(out)} if out.exists() and out.stat().st_size else set()
    rejected = {r.id for r in read_models(rejected_path(out), Rejected) if r.profile is profile}
    return made, rejected


@dataclass(frozen=True)
class AdversarialPlan:
    """What ``voicebench dialogues adversarial`` will do, checked before any request."""

    items: list[Dialogue]
    spec: AgentSpec
    profile: EscalationProfile
    out: Path
    schedules: dict[int, tuple[int, ...]]
    """The target hostility per seeker turn, for each dialogue length in the set."""


def plan_adversarial(
    file: Path,
    profile: EscalationProfile,
    llm: Path,
    *,
    dest: Path | None = None,
    limit: int | None = None,
) -> AdversarialPlan:
    """Load the set and the rewriting agent spec (it must have ``[llm]``); the output set
    defaults to ``FILE-PROFILE.jsonl`` beside the input."""
    from voicebench.agentspec import load_agent_spec

    spec = load_agent_spec(llm)
    if spec.llm is None:
        raise InputError("needs an [llm] section to rewrite with", file=llm, field="llm")
    items = load_dialogues(file)[:limit]
    sizes = sorted({len(d.seeker_turn_indices) for d in items})
    return AdversarialPlan(
        items,
        spec,
        profile,
        dest or file.with_name(f"{file.stem}-{profile.value}.jsonl"),
        {n: tuple(intensity_schedule(profile, n)) for n in sizes},
    )


def run_adversarial(
    plan: AdversarialPlan,
    *,
    attempts: int = 3,
    progress: Callable[[Outcome, int, int], None] | None = None,
) -> list[Outcome]:
    """``make_adversarial`` for a plan, from synchronous code."""
    import asyncio

    return asyncio.run(
        make_adversarial(
            plan.items, plan.spec, plan.profile, plan.out, attempts=attempts, progress=progress
        )
    )
