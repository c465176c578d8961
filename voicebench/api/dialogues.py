"""Dialogue sets from Python: read and check one, import ESConv conversations, make
adversarial items, speak the seeker turns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench import builtin
from voicebench.api.results import PathLike
from voicebench.dialogues import Dialogue, EscalationProfile, import_esconv_to_file, load_dialogues
from voicebench.dialogues.adversarial import (
    AdversarialPlan,
    Outcome,
    plan_adversarial,
    rejected_path,
    run_adversarial,
)
from voicebench.errors import InputError
from voicebench.fixtures import SynthReport, synthesize_fixtures

PROFILES = tuple(p.value for p in EscalationProfile)


def read_dialogues(file: PathLike = builtin.DIALOGUES) -> list[Dialogue]:
    """A dialogue set, every item checked (a bad one is an ``InputError`` naming the file,
    the line and the field)."""
    return load_dialogues(builtin.dialogue_set(file))


def import_esconv(
    file: PathLike, out: PathLike, *, max_per_conversation: int = 2
) -> list[Dialogue]:
    """HEART-style items (and persona cards beside them) made from ESConv conversations;
    nothing is written on bad input."""
    return import_esconv_to_file(file, out, max_items_per_conversation=max_per_conversation)


def adversarial_plan(
    file: PathLike,
    profile: str,
    llm: PathLike,
    *,
    out: PathLike | None = None,
    limit: int | None = None,
) -> AdversarialPlan:
    """What ``adversarial`` will do: the items, the LLM (an agent spec's ``[llm]``), the
    hostility schedule per number of seeker turns, and the set the items go to (default
    ``FILE-PROFILE.jsonl``)."""
    try:
        chosen = EscalationProfile(profile)
    except ValueError:
        raise InputError(f"must be one of: {', '.join(PROFILES)}", field="profile") from None
    return plan_adversarial(
        Path(file),
        chosen,
        builtin.spec_path("agents", llm),
        dest=Path(out) if out is not None else None,
        limit=limit,
    )


def adversarial(
    plan: AdversarialPlan,
    *,
    attempts: int = 3,
    progress: Callable[[Outcome, int, int], None] | None = None,
) -> list[Outcome]:
    """Rewrite the planned items' seeker turns to follow the hostility schedule; each answer is
    checked, asked again, or the item rejected with its reason (in ``rejected_file(plan)``).
    Items already in the set are skipped, so a re-run resumes."""
    return run_adversarial(plan, attempts=attempts, progress=progress)


def rejected_file(plan: AdversarialPlan) -> Path:
    """Where the rejected items of an adversarial plan are kept, each with its reason."""
    return rejected_path(plan.out)


def synth(
    dialogues: PathLike | Sequence[Dialogue] = builtin.DIALOGUES,
    fixtures: PathLike = builtin.FIXTURES,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> SynthReport:
    """Speak every seeker turn with the packaged Piper voice into ``fixtures``; only what is
    missing is synthesized."""
    if isinstance(dialogues, str | Path):
        items: Sequence[Dialogue] = load_dialogues(builtin.dialogue_set(dialogues))
    else:
        items = dialogues
    return synthesize_fixtures(list(items), Path(fixtures), progress=progress)
