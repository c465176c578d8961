"""Judge cards: how far a judge can be trusted, measured on a gold set.

``voicebench judge-check`` writes one card per (judge spec, gold file, split) as JSON in a
``cards/`` folder beside the spec (for a shipped spec of an installed voicebench, in
``INSTALLED_CARDS``: ``reports/judge-cards/``), named ``SPEC-SPECHASH-GOLDHASH-SPLIT.json``.
The spec hash covers everything that changes what the judge answers (models, method and its
settings, rubric text), not retries or timeouts; the gold hash is the file's bytes. A card is
reused while both hashes hold, and shown beside every leaderboard its verdicts make.

Trust takes two bars: the measured accuracy (pairs decided and right, over all pairs) at least
``TRUSTED_ACCURACY``, and a margin of at least ``TRUSTED_MARGIN`` over the best trivial rule on
the same pairs (``voicebench.judging.trivial``: the longer reply, the one sharing more words
with the seeker, the one asking a question). Short of either, or with no card at all, outputs
carry a warning banner (``voicebench.judging.trust``); a judge whose accuracy interval
reaches down to 50% is said to be no better than chance.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field

from voicebench import builtin
from voicebench._model import FrozenModel, read_model
from voicebench.bootstrap import wilson
from voicebench.errors import InputError
from voicebench.judging.corpus import ESCONV_PAIRS_SHA256
from voicebench.judging.families import FamilyTally, add_family_tallies
from voicebench.judging.gold import gold_sha256
from voicebench.judging.mcnemar import PairedComparison
from voicebench.judging.scorer import head_sha256
from voicebench.judging.spec import JudgeSpec, Rubric, load_judge_spec
from voicebench.judging.trivial import TRIVIAL_RULES, RuleOutcome, RuleScore, margin, rule_scores

TRUSTED_ACCURACY = 0.75
"""Below this measured gold accuracy, quality figures are shown as indicative only."""
TRUSTED_MARGIN = 0.10
"""Nor is a judge trusted whose accuracy is less than this (10 points) above the best trivial
rule's on the same pairs (``JudgeCard.margin``), or whose card does not measure the rules: on
pairs where "the longer reply" is right on 70%, a judge right on 75% adds little to a word
count."""
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
    trivial_rules: dict[str, RuleScore] | None = None
    """Each trivial rule (``voicebench.judging.trivial.TRIVIAL_RULES``) on the same pairs:
    what reading only the replies' surface scores. None on a card written before they were
    measured (``benchmarks/card_trivial_rules.py`` fills them from the gold file)."""
    margin: PairedComparison | None = None
    """The judge against the best of ``trivial_rules``, pair by pair: ``difference`` is the
    judge's accuracy minus that rule's (``second``), with its paired 95% interval."""
    by_family: dict[str, FamilyTally] | None = None
    """Per model family named by its gold pairs (``GoldPair.families``), the judge and the
    trivial rules on the pairs with a reply of that family: what a judge that rates its own
    family is measured on (``voicebench.judging.families``); under ``*``, on all the pairs
    that name their families (fewer than ``pairs`` where some gold file does not). None where
    the pairs do not say which family wrote each reply."""

    @property
    def trusted(self) -> bool:
        """Both bars cleared: ``TRUSTED_ACCURACY``, and ``TRUSTED_MARGIN`` over the best
        trivial rule."""
        return self.accuracy >= TRUSTED_ACCURACY and self.beats_trivial_rules

    @property
    def beats_trivial_rules(self) -> bool:
        """Its accuracy is at least ``TRUSTED_MARGIN`` above the best trivial rule's; False
        when the rules were not measured on its pairs."""
        return self.margin is not None and self.margin.difference >= TRUSTED_MARGIN

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


def with_trivial_rules(
    card: JudgeCard, outcomes: Mapping[str, Mapping[str, RuleOutcome]]
) -> JudgeCard:
    """The card with the trivial rules scored on its pairs (``outcomes``: each rule's, by
    pair id, as ``trivial.rule_outcomes`` gives them) and its margin over the best of them."""
    if card.outcomes is None:
        raise InputError(
            f"the card of {card.spec_name} has no per-pair outcomes to set beside the trivial "
            "rules'; measure it again (voicebench judge-check --refresh)",
            file=card.spec_path,
        )
    if set(outcomes) != set(TRIVIAL_RULES) or any(
        set(o) != set(card.outcomes) for o in outcomes.values()
    ):
        raise InputError(
            f"the trivial rules' outcomes are not on the pairs of the card of {card.spec_name} "
            f"({card.split} of {card.gold_sha256[:12]})",
            file=card.spec_path,
        )
    scores = rule_scores(outcomes)
    return card.model_copy(
        update={
            "trivial_rules": scores,
            "margin": margin(card.spec_name, card.split, card.outcomes, scores),
        }
    )


def spec_sha256(spec: JudgeSpec, rubric: Rubric, *, weights: bool = True) -> str:
    """What makes verdicts differ: each judge's answering settings (a scorer's head by its
    contents) and the rubric's text.
    ``weights=False``: what makes the questions asked differ (a checklist's weights are
    applied to its answers afterwards), which names the folder its verdicts are kept in."""
    judges = []
    for j in spec.judges:
        settings = j.model_dump(mode="json", include=set(_HASHED) - {"weights"})
        if weights and j.weights is not None:  # absent otherwise: earlier cards still hold
            settings["weights"] = j.weights
        if j.head is not None:  # a scorer's head, by its bytes (not where it is installed)
            settings["head"] = head_sha256(j.head)
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
    """The gold files of real replies whose cards lead: the shipped ``pairs-real.jsonl`` and
    ``pairs-real-more.jsonl`` (as they are now) and the ESConv pairs
    ``benchmarks/import_esconv_pairs.py`` makes."""
    found = {ESCONV_PAIRS_SHA256}
    for shipped in (builtin.PAIRS_REAL, builtin.PAIRS_REAL_MORE):
        with contextlib.suppress(OSError, InputError):
            found.add(gold_sha256(shipped))
    return found


def combine_cards(cards: list[JudgeCard]) -> JudgeCard:
    """One card for the same judge measured on several gold files (of one split): their
    pairs counted together, the interval of the whole; the per-verdict rates weighed by
    verdicts; the trivial rules and the margin over them measured again on all the pairs
    (unmeasured when a card lacks them); the tallies by family added up. One card is returned
    as it is."""
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
    combined = cards[0].model_copy(
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
            "by_family": add_family_tallies([c.by_family for c in cards]),
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
            "trivial_rules": None,
            "margin": None,
        }
    )
    rules = [c.trivial_rules for c in cards]
    if combined.outcomes is None or any(r is None or set(r) != set(TRIVIAL_RULES) for r in rules):
        return combined  # the rules unmeasured on some of the pairs: on none of them
    union = {n: {k: v for r in rules if r for k, v in r[n].outcomes.items()} for n in TRIVIAL_RULES}
    if any(set(o) != set(combined.outcomes) for o in union.values()):
        return combined  # not the judge's pairs: nothing to compare pair by pair
    return with_trivial_rules(combined, union)


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
