"""People as judges: their own ladder, how often the judges agree with them, how often they
agree with each other, and how consistent each one is.

Human judgments come from the judging folder's ``human/*.jsonl`` (one file per rater, written
by ``voicebench annotate``) and from a file given with ``--human-judgments`` (format in
``agreement.py``). The rules:

- A rater's vote on a pair is its first answer to that pair; a ``repeat`` answer is used only
  for that rater's consistency. Rows without a rater each count as a rater of their own.
- A vote's category, on the pair in sorted order: ``first`` preferred, ``same``, or ``second``.
- Human ladder: Bradley-Terry as for the judges (``bt.py``), on the votes that prefer a side,
  weighted 1 for "slightly better" and 2 for "much better" ("same" adds nothing); 95%
  interval by bootstrap over items. People and judges use different strength scales, so
  compare the ladders' orders and gaps, not their Elo values one to one.
- Human majority on a pair: the contestant more raters preferred; a tie, or only "same"
  votes, leaves the pair without one.
- Judge-human agreement (per judge, from its two orders, and for the ensemble's pair result):
  among pairs with a human majority and a judge winner, the share naming the same contestant,
  with a bootstrap 95% interval over items. HEART reports 78.7% for its judge ensemble.
- Inter-rater agreement: over pairs with two or more raters, every two raters of a pair agree
  when their categories are equal; the share of such rater pairs (HEART: 79.5% between
  people), Fleiss' kappa (a pair's own number of raters, see ``fleiss_kappa``) and
  Krippendorff's alpha (nominal), on the three categories.
- Consistency: per rater, over pairs answered twice, the share answered in the same category.
- Disagreements: pairs whose human majority and ensemble winner differ, the surest first
  (|mean human score| / 2 + judge strength / 5, both on 0-1).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
from pydantic import Field

from voicebench._model import FrozenModel
from voicebench.judging import PairResult, Reply, Verdict
from voicebench.judging.combine import decisions_by_pair, pair_of
from voicebench.rating.agreement import (
    HumanJudgment,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    load_human_judgments,
    majority,
    pair_key,
    share_with_ci,
    votes_by_pair,
)
from voicebench.rating.bt import DEFAULT_PRIOR, bootstrap_elo, fit, to_elo, win_matrices

HUMAN_DIR = "human"
"""A judging folder's sub-folder of rater files (``RATER.jsonl``)."""
HEART_JUDGE_HUMAN = 0.787
HEART_INTER_HUMAN = 0.795
HEART_HUMAN_KAPPA = 0.673
ENSEMBLE = "ensemble"
CATEGORIES = ("first", "same", "second")
MAX_DISAGREEMENTS = 10

Share = tuple[float | None, float | None, float | None, int]
"""(share, 95% CI low, CI high, count)."""


def human_files(judging_dir: Path) -> list[Path]:
    """The rater files in a judging folder's ``human/``, sorted."""
    folder = judging_dir / HUMAN_DIR
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def folder_judgments(judging_dir: Path, extra: Path | None = None) -> list[HumanJudgment]:
    """Every human judgment for a judging folder: its ``human/`` files (an empty one, from a
    rater who has not answered yet, is skipped), then ``extra``."""
    out: list[HumanJudgment] = []
    for path in human_files(judging_dir):
        if path.read_bytes().strip():
            out += load_human_judgments(path)
    if extra is not None:
        out += load_human_judgments(extra)
    return out


class HumanRating(FrozenModel):
    """One contestant on the people's ladder."""

    contestant: str
    elo: float
    elo_ci_bootstrap: tuple[float, float] | None
    votes: int
    """Votes for a side in the pairs this contestant was in."""
    wins: int
    win_rate: float | None


class RaterConsistency(FrozenModel):
    rater: str
    judgments: int
    """Answers given, repeats included."""
    repeats: int
    """Pairs answered twice."""
    consistent: float | None
    """Share of those answered in the same category both times."""


class Disagreement(FrozenModel):
    """A pair on which people and the judges named different winners."""

    item_id: str
    first: str
    second: str
    first_reply: str
    """What was heard of the first contestant's reply."""
    second_reply: str
    people: dict[str, int]
    """Votes by category: ``first``, ``same``, ``second``."""
    people_score: float
    """Mean human score toward ``first`` (-2 ... 2)."""
    people_winner: str
    judge_winner: str
    judge_strength: float
    rationale: str
    """A judge's reason, from one of its verdicts naming the winner."""


class PeopleSummary(FrozenModel):
    """What people said, beside the judges."""

    raters: tuple[str, ...]
    judgments: int
    repeats: int
    pairs: int
    """Distinct pairs with at least one vote."""
    ladder: tuple[HumanRating, ...] = ()
    judge_agreement: dict[str, Share] = Field(default_factory=dict)
    """Judge id (or ``ensemble``) -> agreement with the human majority."""
    inter_rater: Share | None = None
    fleiss_kappa: float | None = None
    krippendorff_alpha: float | None = None
    consistency: tuple[RaterConsistency, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()


def _category(h: HumanJudgment, first: str) -> str:
    pref = h.preferred
    return "same" if pref is None else ("first" if pref == first else "second")


def _toward_first(h: HumanJudgment, first: str) -> int:
    return h.rating if h.contestant_a == first else -h.rating


def human_ladder(
    votes: dict[tuple[str, str, str], dict[str, HumanJudgment]],
    *,
    rounds: int,
    seed: int,
    prior: float = DEFAULT_PRIOR,
) -> tuple[HumanRating, ...]:
    rows = [
        (item, h.preferred, b if h.preferred == a else a, abs(h.rating))
        for (item, a, b), by_rater in votes.items()
        for h in by_rater.values()
        if h.preferred
    ]
    if not rows:
        return ()
    names = sorted({x for _, w, lo, _ in rows for x in (w, lo)})
    items = sorted({r[0] for r in rows})
    index, item_index = {c: k for k, c in enumerate(names)}, {i: k for k, i in enumerate(items)}
    win = np.array([index[r[1]] for r in rows])
    lose = np.array([index[r[2]] for r in rows])
    item_W = win_matrices(
        np.array([item_index[r[0]] for r in rows]),
        win,
        lose,
        np.array([float(r[3]) for r in rows]),
        len(items),
        len(names),
    )
    elo = to_elo(fit(item_W.sum(axis=0), prior=prior))
    boot = bootstrap_elo(item_W, rounds=rounds, seed=seed, prior=prior) if rounds else None
    wins = np.bincount(win, minlength=len(names))
    seen = wins + np.bincount(lose, minlength=len(names))
    ladder = [
        HumanRating(
            contestant=name,
            elo=round(float(elo[k]), 1),
            elo_ci_bootstrap=None
            if boot is None
            else (
                round(float(np.percentile(boot[:, k], 2.5)), 1),
                round(float(np.percentile(boot[:, k], 97.5)), 1),
            ),
            votes=int(seen[k]),
            wins=int(wins[k]),
            win_rate=round(float(wins[k] / seen[k]), 4) if seen[k] else None,
        )
        for k, name in enumerate(names)
    ]
    return tuple(sorted(ladder, key=lambda r: -r.elo))


def _consistency(humans: Sequence[HumanJudgment]) -> tuple[RaterConsistency, ...]:
    by_rater: dict[str, list[HumanJudgment]] = defaultdict(list)
    for h in humans:
        if h.rater:
            by_rater[h.rater].append(h)
    out = []
    for rater, hs in sorted(by_rater.items()):
        first: dict[tuple[str, str, str], HumanJudgment] = {}
        pairs = []
        for h in hs:
            if not h.repeat:
                first.setdefault(pair_key(h), h)
        for h in hs:
            if h.repeat and pair_key(h) in first:
                k = pair_key(h)
                pairs.append(_category(h, k[1]) == _category(first[k], k[1]))
        out.append(
            RaterConsistency(
                rater=rater,
                judgments=len(hs),
                repeats=len(pairs),
                consistent=round(sum(pairs) / len(pairs), 4) if pairs else None,
            )
        )
    return tuple(out)


def _disagreements(
    votes: dict[tuple[str, str, str], dict[str, HumanJudgment]],
    pairs: Sequence[PairResult],
    verdicts: Sequence[Verdict],
    replies: Sequence[Reply],
) -> tuple[Disagreement, ...]:
    heard = {(r.item_id, r.contestant): r.heard for r in replies}
    result = {(p.item_id, p.first, p.second): p for p in pairs}
    reason: dict[tuple[str, str, str, str], str] = {}
    for v in verdicts:
        if v.answer is not None and v.winner:
            reason.setdefault((*pair_of(v), v.winner), v.answer.rationale)
    out = []
    for key, by_rater in votes.items():
        people, p = majority(by_rater), result.get(key)
        if people is None or p is None or p.winner is None or p.winner == people:
            continue
        item, first, second = key
        cats = Counter(_category(h, first) for h in by_rater.values())
        score = float(np.mean([_toward_first(h, first) for h in by_rater.values()]))
        out.append(
            Disagreement(
                item_id=item,
                first=first,
                second=second,
                first_reply=heard.get((item, first), ""),
                second_reply=heard.get((item, second), ""),
                people={c: cats.get(c, 0) for c in CATEGORIES},
                people_score=round(score, 3),
                people_winner=people,
                judge_winner=p.winner,
                judge_strength=round(p.strength, 2),
                rationale=reason.get((*key, p.winner), ""),
            )
        )
    out.sort(key=lambda d: (-(abs(d.people_score) / 2 + d.judge_strength / 5), d.item_id))
    return tuple(out[:MAX_DISAGREEMENTS])


def people_summary(
    humans: Sequence[HumanJudgment],
    verdicts: Sequence[Verdict],
    pairs: Sequence[PairResult],
    replies: Sequence[Reply] = (),
    *,
    rounds: int = 1000,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
) -> PeopleSummary:
    votes = votes_by_pair(humans)
    majorities = {k: m for k, v in votes.items() if (m := majority(v)) is not None}
    judge_winners: dict[str, dict[tuple[str, str, str], str | None]] = defaultdict(dict)
    for key, decisions in decisions_by_pair(verdicts).items():
        for judge, d in decisions.items():
            judge_winners[judge][key] = d.winner
    judge_winners[ENSEMBLE] = {(p.item_id, p.first, p.second): p.winner for p in pairs}
    agreement: dict[str, Share] = {}
    for judge, winners in sorted(judge_winners.items(), key=lambda x: (x[0] == ENSEMBLE, x[0])):
        rows = [(k[0], winners[k] == m) for k, m in majorities.items() if winners.get(k)]
        agreement[judge] = share_with_ci(rows, rounds or 1000, seed)
    multi = {k: v for k, v in votes.items() if len(v) >= 2}
    inter, kappa, alpha = None, None, None
    if multi:
        rows = []
        cats_by_pair = []
        for k, by_rater in sorted(multi.items()):
            cats = [_category(h, k[1]) for h in by_rater.values()]
            cats_by_pair.append(cats)
            rows += [(k[0], x == y) for x, y in combinations(cats, 2)]
        inter = share_with_ci(rows, rounds or 1000, seed)
        kappa = fleiss_kappa(np.array([[c.count(x) for x in CATEGORIES] for c in cats_by_pair]))
        alpha = krippendorff_alpha_nominal(cats_by_pair)
    raters = sorted({h.rater for h in humans if h.rater})
    return PeopleSummary(
        raters=tuple(raters),
        judgments=len(humans),
        repeats=sum(h.repeat for h in humans),
        pairs=len(votes),
        ladder=human_ladder(votes, rounds=rounds, seed=seed, prior=prior),
        judge_agreement=agreement,
        inter_rater=inter,
        fleiss_kappa=None if kappa is None else round(kappa, 4),
        krippendorff_alpha=None if alpha is None else round(alpha, 4),
        consistency=_consistency(humans),
        disagreements=_disagreements(votes, pairs, verdicts, replies),
    )
