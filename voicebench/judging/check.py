"""``voicebench judge-check``: a judge asked about every gold pair, and its card.

Every gold pair is put to every judge of the spec in both orders through the judging code
that rates agents (same prompt, parsing, retries, verdict cache and concurrency: see
``voicebench.judging.run``), its two replies standing as contestants ``a`` and ``b``. The
pair's result is combined as any pair's is (``combine``) and compared with ``better``.
Verdicts are cached in the check folder, so a killed check resumes and a re-run with the
same spec and gold file asks nothing. The card sets the trivial rules (``trivial``) on the
same pairs beside the judge; a card written before them gains them when it is reused.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from voicebench import builtin
from voicebench._jsonl import write_atomic
from voicebench.bootstrap import wilson
from voicebench.errors import InputError
from voicebench.judging.cards import (
    INSTALLED_CARDS,
    JudgeCard,
    Outcome,
    Tally,
    card_path,
    read_card,
    real_gold_sha256s,
    spec_sha256,
    with_trivial_rules,
)
from voicebench.judging.combine import decisions_by_pair, judge_health, pair_results
from voicebench.judging.families import family_tallies
from voicebench.judging.gold import GoldPair, GoldSet, Split, load_gold
from voicebench.judging.logprob import reweigh
from voicebench.judging.models import HUMAN_FAMILY, ContestantKind, PairResult, Reply, Verdict
from voicebench.judging.prompt import turns_context
from voicebench.judging.run import Matchup, both_orders, decide_pending
from voicebench.judging.spec import load_judge_spec
from voicebench.judging.store import read_verdicts
from voicebench.judging.trivial import rule_outcomes

DEFAULT_GOLD = builtin.PAIRS_GOLD
SIDES = ("a", "b")


@dataclass(frozen=True)
class CheckResult:
    card: JudgeCard
    path: Path
    """Where the card is."""
    reused: bool
    """The card was already there for this spec and gold file: nothing was asked."""
    pairs: list[PairResult]
    gold: list[GoldPair]


def comparisons(gold: list[GoldPair], spec, rubric) -> list[Matchup]:
    """Both orders of every pair, for every judge of the spec."""
    out = []
    for pair in gold:
        context = turns_context(pair.turns)
        a, b = (
            Reply(
                item_id=pair.id,
                contestant=side,
                kind=ContestantKind.HUMAN,
                family=HUMAN_FAMILY,
                heard=text,
                text=text,
            )
            for side, text in zip(SIDES, (pair.reply_a, pair.reply_b), strict=True)
        )
        for judge in spec.judges:
            out += both_orders(pair.id, context, judge, a, b, rubric)
    return out


def _shown(path: str | Path) -> str:
    """A path as a card records it: relative to the working folder when inside it, so a card
    made in a clone reads the same in any other."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def gold_results(gold: list[GoldPair], verdicts: list[Verdict]) -> list[PairResult]:
    """Each gold pair's combined result, in the gold file's order (a pair with no verdict yet
    is undecided)."""
    results = {p.item_id: p for p in pair_results(verdicts)}
    return [
        results.get(g.id) or PairResult(item_id=g.id, first="a", second="b", winner=None)
        for g in gold
    ]


def make_card(
    gold: list[GoldPair],
    verdicts: list[Verdict],
    *,
    spec,
    spec_path: Path,
    spec_hash: str,
    gold_set: GoldSet,
    split: str,
) -> tuple[JudgeCard, list[PairResult]]:
    """The card's figures from the verdicts (one per judge, pair and order), beside the
    trivial rules' on the same pairs, and both on the pairs with a reply of each family the
    pairs name."""
    pairs = gold_results(gold, verdicts)
    right = {p.item_id for p, g in zip(pairs, gold, strict=True) if p.winner == g.better}
    decided = sum(p.winner is not None for p in pairs)

    def tally(members: list[GoldPair]) -> Tally:
        return Tally(pairs=len(members), correct=sum(g.id in right for g in members))

    by_cat: dict[str, list[GoldPair]] = defaultdict(list)
    by_dim: dict[str, list[GoldPair]] = defaultdict(list)
    for g in gold:
        if g.category:
            by_cat[g.category].append(g)
        for d in g.dimension_letters:
            by_dim[d].append(g)
    complete = flips = 0
    for decisions in decisions_by_pair(verdicts).values():
        for decision in decisions.values():
            complete += decision.complete
            flips += decision.complete and not decision.consistent
    health = judge_health(verdicts)
    answered = [v for v in verdicts if v.answer is not None]
    first_slot = sum(h.first_slot_wins for h in health)
    times = [v.latency_ms for v in answered if v.latency_ms is not None]
    n = len(gold)
    _, low, high = wilson(len(right), n) or (0.0, 0.0, 0.0)
    outcomes: dict[str, Outcome] = {
        g.id: "right" if g.id in right else "undecided" if p.winner is None else "wrong"
        for p, g in zip(pairs, gold, strict=True)
    }
    rules = rule_outcomes(gold)
    card = JudgeCard(
        spec_name=spec.name,
        spec_path=_shown(spec_path),
        spec_sha256=spec_hash,
        judges=tuple(j.id for j in spec.judges),
        methods=tuple(j.variant or j.method for j in spec.judges),
        gold_path=_shown(gold_set.path),
        gold_sha256=gold_set.sha256,
        split=split,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        pairs=n,
        decided=decided,
        correct=len(right),
        accuracy=round(len(right) / n, 4) if n else 0.0,
        accuracy_low=round(low, 4),
        accuracy_high=round(high, 4),
        decided_rate=round(decided / n, 4) if n else 0.0,
        flips=flips,
        flip_rate=round(flips / complete, 4) if complete else None,
        first_slot_rate=round(first_slot / len(answered), 4) if answered else None,
        verdicts=len(verdicts),
        failed_verdicts=len(verdicts) - len(answered),
        seconds_per_verdict=round(sum(times) / len(times) / 1000, 3) if times else None,
        by_category={c: tally(m) for c, m in sorted(by_cat.items())},
        by_dimension={d: tally(by_dim[d]) for d in "HEART" if by_dim.get(d)},
        longer_worse=tally([g for g in gold if g.longer_is_worse]),
        outcomes=outcomes,
        dev_pairs=sum(g.split == "dev" for g in gold),
        real_replies=gold_set.sha256 in real_gold_sha256s(),
        by_family=family_tallies(gold, outcomes, rules),
    )
    return with_trivial_rules(card, rules), pairs


def with_families(card: JudgeCard, gold: list[GoldPair]) -> JudgeCard:
    """A card measured before its pairs named their families, with its tallies by family
    from its per-pair outcomes (``gold``: its pairs, which name them); asks no judge."""
    if card.outcomes is None or set(card.outcomes) != {g.id for g in gold}:
        raise InputError(
            f"the card of {card.spec_name} has no outcomes on these {len(gold)} pairs",
            file=card.spec_path,
        )
    rules = rule_outcomes(gold) if card.trivial_rules is not None else None
    return card.model_copy(update={"by_family": family_tallies(gold, card.outcomes, rules)})


def default_check_dir(spec_name: str, spec_hash: str, gold_hash: str) -> Path:
    return Path("reports/judge-check") / f"{spec_name}-{spec_hash[:12]}-{gold_hash[:12]}"


async def check_judge(
    spec_path: Path,
    gold_path: Path = DEFAULT_GOLD,
    *,
    split: Split = "all",
    out_dir: Path | None = None,
    concurrency: int = 1,
    refresh: bool = False,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[Verdict, int, int], None] | None = None,
    client_factory: Callable | None = None,
) -> CheckResult:
    """Measure the judge of ``spec_path`` on ``gold_path`` (nothing is asked until the gold
    file is valid) and write its card; an existing card for the same hashes is reused."""
    say = on_status or (lambda _msg: None)
    spec_path = builtin.spec_path("judges", spec_path)
    spec, rubric = load_judge_spec(spec_path)
    gold_set = load_gold(builtin.GOLD_SETS.get(str(gold_path), gold_path))
    gold = gold_set.select(split)
    if not gold:
        raise InputError(
            f"it has no {split} pairs (--split all measures every pair)", file=gold_set.path
        )
    spec_hash = spec_sha256(spec, rubric)
    path = card_path(spec_path, spec, spec_hash, gold_set.sha256, split)
    asked_hash = spec_sha256(spec, rubric, weights=False)
    out_dir = out_dir or default_check_dir(spec.name, asked_hash, gold_set.sha256)
    wanted = comparisons(gold, spec, rubric)
    if path.exists() and not refresh:
        card = read_card(path)
        before, same = card, set(card.outcomes or ()) == {g.id for g in gold}
        if card.trivial_rules is None and same:
            card = with_trivial_rules(card, rule_outcomes(gold))  # a card from before them
        if card.by_family is None and same and any(g.families for g in gold):
            card = with_families(card, gold)  # a card from before its pairs named families
        if card != before and not builtin.installed(path):
            write_atomic(path, card.model_dump_json(indent=2) + "\n")
        return CheckResult(card, path, True, gold_results(gold, _cached(out_dir, wanted)), gold)
    out_dir.mkdir(parents=True, exist_ok=True)
    cached = {v.key for v in _cached(out_dir, wanted) if v.answer is not None}
    pending = [c for c in wanted if c.key not in cached]
    say(
        f"{len(gold)} gold pairs ({split}) x {len(spec.judges)} judge(s) x 2 orders: "
        f"{len(wanted)} verdicts, {len(wanted) - len(pending)} already decided -> {out_dir}"
    )
    await decide_pending(
        pending,
        rubric,
        out_dir,
        concurrency=concurrency,
        say=say,
        progress=progress,
        client_factory=client_factory,
    )
    card, pairs = make_card(
        gold,
        _cached(out_dir, wanted),
        spec=spec,
        spec_path=spec_path,
        spec_hash=spec_hash,
        gold_set=gold_set,
        split=split,
    )
    if builtin.installed(path):  # a shipped card measured again: the new one goes here
        path = INSTALLED_CARDS / path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, card.model_dump_json(indent=2) + "\n")
    return CheckResult(card, path, False, pairs, gold)


def _cached(out_dir: Path, wanted: list[Matchup]) -> list[Verdict]:
    keys = {c.key for c in wanted}
    if not out_dir.exists():
        return []
    return reweigh([v for v in read_verdicts(out_dir) if v.key in keys], wanted)
