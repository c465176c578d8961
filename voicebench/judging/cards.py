"""Judge cards: how far a judge can be trusted, measured on a gold set.

``voicebench judge-check`` writes one card per (judge spec, gold file, split) as JSON in a
``cards/`` folder beside the spec (for a shipped spec of an installed voicebench, in
``INSTALLED_CARDS``: ``reports/judge-cards/``), named ``SPEC-SPECHASH-GOLDHASH-SPLIT.json``.
The spec hash covers everything that changes what the judge answers (models, method and its
settings, rubric text), not retries or timeouts; the gold hash is the file's bytes. A card is
reused while both hashes hold, and shown beside every leaderboard its verdicts make.

Trust is the measured accuracy (pairs decided and right, over all pairs): below
``TRUSTED_ACCURACY``, or with no card at all, outputs carry a warning banner; a judge whose
accuracy interval reaches down to 50% is said to be no better than chance.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import Field

from voicebench import builtin
from voicebench._model import FrozenModel, read_model
from voicebench.bootstrap import wilson
from voicebench.errors import InputError
from voicebench.judging.corpus import ESCONV_PAIRS_SHA256
from voicebench.judging.gold import gold_sha256
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


Outcome = Literal["right", "wrong", "undecided"]


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
    outcomes: dict[str, Outcome] | None = None
    """Each gold pair's id: ``right``, ``wrong`` or ``undecided``, so that two cards on the
    same pairs can be compared pair by pair (``paired_comparison``). Absent on older cards."""
    dev_pairs: int | None = None
    """Of ``pairs``, those of the dev split: the pairs a judge's method is tuned and its
    weights are fitted on (``benchmarks/fit_checklist.py``), so figures that count them read
    higher than the judge deserves. 0 on a holdout card; None on a card written before they
    were counted (``includes_dev`` then reads ``split``)."""
    real_replies: bool = False
    """Measured on replies that were really written (the shipped ``pairs-real.jsonl``, the
    pairs imported from ESConv), not on pairs written to carry a defect: the figure that says
    how far the judge agrees with people on what agents and people actually say."""
    written: JudgeCard | None = None
    """On a real-reply card that leads: the same judge on the written gold set, shown second
    (it says whether the judge catches plain defects)."""

    @property
    def trusted(self) -> bool:
        return self.accuracy >= TRUSTED_ACCURACY

    @property
    def includes_dev(self) -> bool:
        """Its figures count dev pairs, which tuning saw: not a held-out measure."""
        if self.dev_pairs is not None:
            return self.dev_pairs > 0
        return self.split != "holdout"

    @property
    def chance_level(self) -> bool:
        """Its accuracy's 95% interval reaches down to a coin's 50%: its verdicts cannot be
        told apart from guessing."""
        return self.accuracy_low <= 0.5


def spec_sha256(spec: JudgeSpec, rubric: Rubric, *, weights: bool = True) -> str:
    """What makes verdicts differ: each judge's answering settings and the rubric's text.
    ``weights=False``: what makes the questions asked differ (a checklist's weights are
    applied to its answers afterwards), which names the folder its verdicts are kept in."""
    judges = []
    for j in spec.judges:
        settings = j.model_dump(mode="json", include=set(_HASHED) - {"weights"})
        if weights and j.weights is not None:  # absent otherwise: earlier cards still hold
            settings["weights"] = j.weights
        judges.append(settings)
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
    """The card of the spec as it is now, the holdout split first. For a given gold file,
    that file's; else its card on real replies where it has one (the real-reply gold files'
    cards of one split combined, ``combine_cards``), carrying its card on the written gold set
    as ``written``, else the written set's card. None when the spec is unreadable or was never
    measured."""
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
    if gold_sha256 is not None:
        return _preferred([c for c in found if c.gold_sha256 == gold_sha256] or found)
    real = real_gold_sha256s()
    written = [c for c in found if c.gold_sha256 not in real]
    shipped = _shipped_gold_sha256()  # the shipped gold set's cards before earlier versions'
    if any(c.gold_sha256 == shipped for c in written):
        written = [c for c in written if c.gold_sha256 == shipped]
    second = _preferred(written)
    real_cards = [c for c in found if c.gold_sha256 in real]
    for split in SPLIT_PREFERENCE:
        of_split = [c for c in real_cards if c.split == split]
        if of_split:
            return combine_cards(of_split).model_copy(update={"written": second})
    return second


def _preferred(cards: list[JudgeCard]) -> JudgeCard | None:
    """The card no tuning saw first (``SPLIT_PREFERENCE``)."""
    ranked = sorted(
        cards, key=lambda c: SPLIT_PREFERENCE.index(c.split) if c.split in SPLIT_PREFERENCE else 9
    )
    return ranked[0] if ranked else None


def real_gold_sha256s() -> set[str]:
    """The gold files of real replies whose cards lead: the shipped ``pairs-real.jsonl`` (as
    it is now) and the ESConv pairs ``benchmarks/import_esconv_pairs.py`` makes."""
    found = {ESCONV_PAIRS_SHA256}
    with contextlib.suppress(OSError, InputError):
        found.add(gold_sha256(builtin.PAIRS_REAL))
    return found


def combine_cards(cards: list[JudgeCard]) -> JudgeCard:
    """One card for the same judge measured on several gold files (of one split): their
    pairs counted together, the interval of the whole; the per-verdict rates weighed by
    verdicts. One card is returned as it is."""
    if len(cards) == 1:
        return cards[0]
    cards = sorted(cards, key=lambda c: c.gold_path)
    pairs = sum(c.pairs for c in cards)
    correct = sum(c.correct for c in cards)
    decided = sum(c.decided for c in cards)
    verdicts = sum(c.verdicts for c in cards)
    _, low, high = wilson(correct, pairs) or (0.0, 0.0, 0.0)

    def weighed(field: str, by: str) -> float | None:
        known = [(getattr(c, field), getattr(c, by)) for c in cards]
        known = [(v, w) for v, w in known if v is not None]
        total = sum(w for _, w in known)
        return sum(v * w for v, w in known) / total if total else None

    def tallies(field: str) -> dict[str, Tally]:
        out: dict[str, Tally] = {}
        for c in cards:
            for name, t in getattr(c, field).items():
                had = out.get(name, Tally(pairs=0, correct=0))
                out[name] = Tally(pairs=had.pairs + t.pairs, correct=had.correct + t.correct)
        return out

    outcomes = [c.outcomes for c in cards]
    return cards[0].model_copy(
        update={
            "gold_path": " + ".join(c.gold_path for c in cards),
            "gold_sha256": hashlib.sha256(
                "+".join(c.gold_sha256 for c in cards).encode("utf-8")
            ).hexdigest(),
            "created_at": max(c.created_at for c in cards),
            "pairs": pairs,
            "decided": decided,
            "correct": correct,
            "accuracy": correct / pairs if pairs else 0.0,
            "accuracy_low": low,
            "accuracy_high": high,
            "decided_rate": decided / pairs if pairs else 0.0,
            "flips": sum(c.flips for c in cards),
            "flip_rate": weighed("flip_rate", "decided"),
            "first_slot_rate": weighed("first_slot_rate", "verdicts"),
            "verdicts": verdicts,
            "failed_verdicts": sum(c.failed_verdicts for c in cards),
            "seconds_per_verdict": weighed("seconds_per_verdict", "verdicts"),
            "by_category": tallies("by_category"),
            "by_dimension": tallies("by_dimension"),
            "longer_worse": Tally(
                pairs=sum(c.longer_worse.pairs for c in cards),
                correct=sum(c.longer_worse.correct for c in cards),
            ),
            "outcomes": None
            if any(o is None for o in outcomes)
            else {k: v for o in outcomes if o for k, v in o.items()},
            "dev_pairs": None
            if any(c.dev_pairs is None for c in cards)
            else sum(c.dev_pairs or 0 for c in cards),
            "real_replies": any(c.real_replies for c in cards),
        }
    )


def _shipped_gold_sha256() -> str | None:
    try:
        return gold_sha256(builtin.PAIRS_GOLD)
    except (OSError, InputError):
        return None


def card_of_judging(judging_dir: Path) -> JudgeCard | None:
    """The card a judging folder was made under: its own copy, else the spec's current one."""
    copy = judging_dir / CARD_FILE
    if copy.exists():
        return read_card(copy)
    from voicebench.judging.store import read_judging_header

    return find_card(read_judging_header(judging_dir).judge_spec_path)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def split_text(card: JudgeCard) -> str:
    """Which pairs a card's figures count, saying so when dev pairs are among them."""
    if not card.includes_dev:
        return card.split
    if card.split == "dev" or card.dev_pairs is None:
        return f"{card.split}: includes dev pairs, tuned on"
    return f"{card.split}: includes {card.dev_pairs} dev pairs, tuned on"


def card_line(card: JudgeCard | None, spec: str = "SPEC") -> str:
    """The lines for beside a leaderboard: the judge's measured accuracy on real replies,
    then on the written gold set ("catches plain defects"); or that it has none."""
    if card is None:
        return (
            "judge unmeasured: no judge card, so nobody knows how far its verdicts agree with "
            f"careful people (voicebench judge-check --judge {spec})"
        )
    interval = f"95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)}"
    what = "pairs of real replies" if card.real_replies else "gold pairs"
    line = (
        f"judge {card.spec_name}: {_pct(card.accuracy)} right on {card.pairs} {what} "
        f"({split_text(card)}; {interval}), {_pct(card.decided_rate)} decided, "
        f"{card.flips} position flips"
    )
    if not card.real_replies:
        return line + "; not measured on real replies"
    w = card.written
    if w is not None:
        line += (
            f"\ncatches plain defects: {_pct(w.accuracy)} right on {w.pairs} written gold pairs "
            f"({split_text(w)}; 95% CI {_pct(w.accuracy_low)}-{_pct(w.accuracy_high)})"
        )
    return line


def trust_warning(card: JudgeCard | None) -> str | None:
    """The banner for outputs made by an untrusted judge; None for a trusted one."""
    if card is None:
        return (
            "unmeasured judge: its accuracy on the gold set is unknown, so read the quality "
            "figures as unverified"
        )
    if card.chance_level:
        where = "real replies" if card.real_replies else "the gold set"
        return (
            f"judge no better than chance on {where} ({_pct(card.accuracy)} of "
            f"{card.pairs} pairs, 95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)}): "
            "its quality figures and rankings carry no information"
        )
    if not card.trusted:
        where = "pairs of real replies" if card.real_replies else "gold pairs"
        return (
            f"judge right on only {_pct(card.accuracy)} of {where} (below "
            f"{_pct(TRUSTED_ACCURACY)}): read the quality figures as indicative only"
        )
    return None


def figure_warning(card: JudgeCard | None) -> str | None:
    """The banner in a quality figure's title; None for a trusted judge."""
    if card is None:
        return "UNMEASURED JUDGE: quality figures are unverified"
    if card.chance_level:
        where = "REAL REPLIES" if card.real_replies else "GOLD PAIRS"
        return f"JUDGE AT CHANCE ON {where} ({_pct(card.accuracy)}): quality figures mean nothing"
    if not card.trusted:
        where = "REAL REPLIES" if card.real_replies else "GOLD PAIRS"
        return f"JUDGE RIGHT ON {_pct(card.accuracy)} OF {where}: quality figures are indicative"
    return None
