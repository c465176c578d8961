"""Judge cards: how far a judge can be trusted, measured on a gold set.

``voicebench judge-check`` writes one card per (judge spec, gold file, split) as JSON in a
``cards/`` folder beside the spec, named ``SPEC-SPECHASH-GOLDHASH-SPLIT.json``. The spec hash
covers everything that changes what the judge answers (models, method and its settings,
rubric text), not retries or timeouts; the gold hash is the file's bytes. A card is reused
while both hashes hold, and shown beside every leaderboard its verdicts make.

Trust is the measured accuracy (pairs decided and right, over all pairs): below
``TRUSTED_ACCURACY``, or with no card at all, outputs carry a warning banner.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import Field

from voicebench import builtin
from voicebench._model import FrozenModel, read_model
from voicebench.errors import InputError
from voicebench.judging.spec import JudgeSpec, Rubric, load_judge_spec

TRUSTED_ACCURACY = 0.75
"""Below this measured gold accuracy, quality figures are shown as indicative only."""
CARD_FILE = "judge-card.json"
"""A judging folder's copy of the card of the judge that made its verdicts."""
SPLIT_PREFERENCE = ("holdout", "all", "dev")
"""Which card to show when several exist: pairs no tuning saw first."""
_HASHED = (
    "provider",
    "model",
    "base_url",
    "temperature",
    "max_tokens",
    "method",
    "n_ctx",
    "history_turns",
    "phrasings",
    "ask_dimensions",
    "questions",
)


SMOKE_WARNING = (
    "offline smoke judge: these verdicts test the judging path only; a 135M model "
    "cannot judge empathy, so the quality figures mean nothing"
)
"""Shown wherever the smoke judge's verdicts are."""


class Tally(FrozenModel):
    pairs: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.pairs if self.pairs else None


class JudgeCard(FrozenModel):
    """One judge spec measured on one gold file."""

    spec_name: str
    spec_path: str
    spec_sha256: str
    judges: tuple[str, ...]
    """Judge ids (``provider/model``) with their method."""
    methods: tuple[str, ...]
    gold_path: str
    gold_sha256: str
    split: str
    """Which pairs: all, dev (tuning) or holdout (never tuned on)."""
    created_at: str
    pairs: int
    decided: int
    correct: int
    accuracy: float
    """Pairs decided and right, over all pairs."""
    accuracy_low: float
    accuracy_high: float
    """Wilson 95% interval of ``accuracy``."""
    decided_rate: float
    flips: int
    flip_rate: float | None
    """Of the (judge, pair) decisions with both orders answered, those whose two orders named
    different winners."""
    first_slot_rate: float | None
    """Answered verdicts won by reply A (0.5 for a judge without a slot preference)."""
    verdicts: int
    failed_verdicts: int
    seconds_per_verdict: float | None
    """Mean time of an answered verdict (one order, every question of it)."""
    by_category: dict[str, Tally] = Field(default_factory=dict)
    by_dimension: dict[str, Tally] = Field(default_factory=dict)
    longer_worse: Tally
    """Pairs where the longer reply is the worse one."""

    @property
    def trusted(self) -> bool:
        return self.accuracy >= TRUSTED_ACCURACY


def spec_sha256(spec: JudgeSpec, rubric: Rubric) -> str:
    """What makes verdicts differ: each judge's answering settings and the rubric's text."""
    judges = [j.model_dump(mode="json", include=set(_HASHED)) for j in spec.judges]
    payload = json.dumps([judges, rubric.sha256], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


INSTALLED_CARDS = Path("reports") / "judge-cards"
"""Where the cards of a spec that an installed wheel carries are written (under the current
folder: nothing is written into the install) and looked for, beside the shipped ones."""


def cards_dirs(spec_path: Path) -> list[Path]:
    """The folders holding a spec's cards; new cards go into the first."""
    beside = spec_path.parent / "cards"
    return [INSTALLED_CARDS, beside] if builtin.installed(spec_path) else [beside]


def card_path(spec_path: Path, spec: JudgeSpec, spec_hash: str, gold_hash: str, split: str) -> Path:
    """Where the card of a spec measured on a gold set is written: beside the spec, or for
    a spec that an installed wheel carries, an existing shipped card else ``INSTALLED_CARDS``."""
    name = f"{spec.name}-{spec_hash[:12]}-{gold_hash[:12]}-{split}.json"
    dirs = cards_dirs(spec_path)
    return next((d / name for d in dirs[1:] if (d / name).exists()), dirs[0] / name)


def read_card(path: Path) -> JudgeCard:
    return read_model(JudgeCard, path)


def find_card(spec_path: str | Path, *, gold_sha256: str | None = None) -> JudgeCard | None:
    """The card of the spec as it is now: for the given gold file when there is one, else any;
    the holdout split first. None when the spec is unreadable or was never measured."""
    try:
        spec_path = builtin.spec_path("judges", spec_path)
        spec, rubric = load_judge_spec(spec_path, require_secrets=False)
    except InputError:
        return None
    digest = spec_sha256(spec, rubric)
    found = []
    paths = [p for d in cards_dirs(spec_path) for p in d.glob(f"*-{digest[:12]}-*.json")]
    for path in sorted(paths):
        try:
            card = read_card(path)
        except InputError:
            continue
        if card.spec_sha256 == digest:
            found.append(card)
    if gold_sha256 is not None and any(c.gold_sha256 == gold_sha256 for c in found):
        found = [c for c in found if c.gold_sha256 == gold_sha256]
    found.sort(key=lambda c: SPLIT_PREFERENCE.index(c.split) if c.split in SPLIT_PREFERENCE else 9)
    return found[0] if found else None


def card_of_judging(judging_dir: Path) -> JudgeCard | None:
    """The card a judging folder was made under: its own copy, else the spec's current one."""
    copy = judging_dir / CARD_FILE
    if copy.exists():
        return read_card(copy)
    from voicebench.judging.store import read_judging_header

    return find_card(read_judging_header(judging_dir).judge_spec_path)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def card_line(card: JudgeCard | None, spec: str = "SPEC") -> str:
    """One line for beside a leaderboard: the judge's measured accuracy, or that it has none."""
    if card is None:
        return (
            "judge unmeasured: no judge card, so nobody knows how far its verdicts agree with "
            f"careful people (voicebench judge-check --judge {spec})"
        )
    return (
        f"judge {card.spec_name}: {_pct(card.accuracy)} right on {card.pairs} gold pairs "
        f"({card.split}; 95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)}), "
        f"{_pct(card.decided_rate)} decided, {card.flips} position flips"
    )


def trust_warning(card: JudgeCard | None) -> str | None:
    """The banner for outputs made by an untrusted judge; None for a trusted one."""
    if card is None:
        return (
            "unmeasured judge: its accuracy on the gold set is unknown, so read the quality "
            "figures as unverified"
        )
    if not card.trusted:
        return (
            f"judge right on only {_pct(card.accuracy)} of gold pairs (below "
            f"{_pct(TRUSTED_ACCURACY)}): read the quality figures as indicative only"
        )
    return None


def figure_warning(card: JudgeCard | None) -> str | None:
    """The banner in a quality figure's title; None for a trusted judge."""
    if card is None:
        return "UNMEASURED JUDGE: quality figures are unverified"
    if not card.trusted:
        return f"JUDGE RIGHT ON {_pct(card.accuracy)} OF GOLD PAIRS: quality figures are indicative"
    return None
