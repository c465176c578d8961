"""Judges and the families they rate.

A judge does not rate a contestant of its own model family: a model may favour replies in its
own family's style. A judge spec can exempt a judge (``rates_own_family``: the checklist judge
runs a Qwen model, and so does the demo's second agent). Where one did rate its own family,
its card's figure on the gold pairs with a reply of that family (``JudgeCard.by_family``,
from gold pairs that name their replies' families, ``GoldPair.families``) is shown beside
that contestant's rating, next to its figure on all pairs (``voicebench.judging.trust``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import Field

from voicebench._model import FrozenModel
from voicebench.bootstrap import wilson
from voicebench.errors import InputError
from voicebench.judging.gold import GoldPair
from voicebench.judging.models import Reply
from voicebench.judging.spec import load_judge_spec
from voicebench.judging.store import current_verdicts, read_judging_header, read_replies
from voicebench.judging.trivial import RuleOutcome


class FamilyTally(FrozenModel):
    """A judge card's count on the gold pairs where one reply, or both, is one family's."""

    pairs: int
    """The pairs with a reply of the family."""
    correct: int
    """Of them, those the judge decided and got right."""
    rules: dict[str, int] = Field(default_factory=dict)
    """Each trivial rule's right picks on the same pairs, by its short name
    (``voicebench.judging.trivial.TRIVIAL_RULES``); empty where the card does not measure
    the rules."""

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.pairs if self.pairs else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson 95% interval of ``accuracy``."""
        found = wilson(self.correct, self.pairs)
        return None if found is None else (found[1], found[2])

    @property
    def best_rule(self) -> tuple[str, float] | None:
        """The trivial rule right on most of these pairs (the first named on a tie) and its
        accuracy on them; None where the rules are not measured."""
        if not self.rules or not self.pairs:
            return None
        best = max(self.rules, key=lambda name: self.rules[name])
        return best, self.rules[best] / self.pairs


NAMED = "*"
"""``family_tallies``' key for all the pairs that name their families, whatever they are."""


def family_tallies(
    gold: Iterable[GoldPair],
    outcomes: Mapping[str, str],
    rules: Mapping[str, Mapping[str, RuleOutcome]] | None = None,
) -> dict[str, FamilyTally] | None:
    """Per family named in ``gold``, the judge's tally (``outcomes``: ``right``, ``wrong`` or
    ``undecided`` by pair id) on the pairs with a reply of that family, and each trivial
    rule's (``rules``, as ``trivial.rule_outcomes`` gives them); under ``NAMED``, the same on
    every pair that names its families. None when no pair names them."""
    members: dict[str, list[str]] = defaultdict(list)
    for pair in gold:
        for family in sorted(set(pair.families or ())):
            members[family].append(pair.id)
        if pair.families:
            members[NAMED].append(pair.id)
    if not members:
        return None
    return {
        family: FamilyTally(
            pairs=len(ids),
            correct=sum(outcomes[i] == "right" for i in ids),
            rules={n: sum(o[i] == "right" for i in ids) for n, o in (rules or {}).items()},
        )
        for family, ids in sorted(members.items())
    }


def add_family_tallies(
    tallies: Sequence[dict[str, FamilyTally] | None],
) -> dict[str, FamilyTally] | None:
    """The tallies of several cards (of one judge, on different gold files) added up; a rule
    counts only where every card with pairs of that family measured it. None when no card
    has any."""
    known = [t for t in tallies if t is not None]
    if not known:
        return None
    out: dict[str, FamilyTally] = {}
    for family in sorted({f for t in known for f in t}):
        parts = [t[family] for t in known if family in t]
        shared = set.intersection(*(set(p.rules) for p in parts))
        out[family] = FamilyTally(
            pairs=sum(p.pairs for p in parts),
            correct=sum(p.correct for p in parts),
            rules={n: sum(p.rules[n] for p in parts) for n in sorted(shared)},
        )
    return out


class OwnFamily(FrozenModel):
    """A contestant that a judge of its own family rated (the judge exempt from the family
    rule by ``rates_own_family``)."""

    judge: str
    """The judge's id, ``provider/model``."""
    family: str
    """The family the judge and the contestant share."""
    contestant: str


def own_family(rated: Iterable[tuple[str, str, Reply]]) -> tuple[OwnFamily, ...]:
    """From ``(judge id, judge family, reply it rated)``: each contestant a judge of its own
    family rated, once, sorted."""
    found = {
        OwnFamily(judge=judge, family=family, contestant=reply.contestant)
        for judge, family, reply in rated
        if reply.family == family
    }
    return tuple(sorted(found, key=lambda o: (o.contestant, o.judge)))


def judge_families(judging_dir: Path) -> dict[str, str]:
    """Each judge's family by id, as the judging folder's header records it; for a folder
    written before it did, as its judge spec says (empty when the spec cannot be read)."""
    header = read_judging_header(judging_dir)
    if header.judge_families:
        return dict(header.judge_families)
    try:
        spec, _ = load_judge_spec(header.judge_spec_path, require_secrets=False, unit=header.unit)
    except InputError:
        return {}
    return {j.id: j.family for j in spec.judges}


def own_family_of(judging_dir: Path) -> tuple[OwnFamily, ...]:
    """Each contestant a judge of its own family rated in a judging folder's verdicts."""
    families = judge_families(judging_dir)
    replies = {(r.item_id, r.contestant): r for r in read_replies(judging_dir)}
    return own_family(
        (v.judge, families[v.judge], reply)
        for v in current_verdicts(judging_dir)
        if v.judge in families
        for c in (v.contestant_a, v.contestant_b)
        if (reply := replies.get((v.item_id, c))) is not None
    )
