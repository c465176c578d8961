"""Agreement between judges, and between the judges and people.

Each judge's decision on a pair comes from its two orders (``combine_orders``): the winning
contestant, or none for a position flip or a failure.

- Pairwise agreement of two judges: among pairs both decided, the share naming the same
  winner. Three-way: among pairs all three decided, the share where all three agree.
- Fleiss' kappa over judges, on pairs every judge decided: overall (categories: first or
  second contestant of the sorted pair) and per dimension (first, second, or neither).
- Krippendorff's alpha (nominal) for the overall preference; judges missing a pair are
  allowed (a pair counts when at least two judges decided it).
- Human agreement: the share of pairs where the ensemble's winner equals the human
  majority, among pairs where both have one.
- 95% intervals: bootstrap over items (pairs of one item stay together), seeded.

Human-judgment files, CSV with a header row or JSONL, one judgment per row::

    item_id,contestant_a,contestant_b,rating,rater
    reg-job-crisis-01,local-smollm2,human/reference,A slightly better,r1

``rating`` is one of ``A much better``, ``A slightly better``, ``same``, ``B slightly better``,
``B much better`` (HEART's 5-point scale), or the integers 2, 1, 0, -1, -2 (positive favours
A). ``rater`` is optional. The human majority on a pair is the side most raters preferred (each
rater's first answer to it; "same" votes for neither); a tie leaves the pair without a human
majority.

The rating page (``voicebench annotate``) writes JSONL with further, optional fields: ``task``
(its opaque task id), ``repeat`` (true for a pair shown to the rater a second time, to
measure consistency: repeats count only there), ``dimensions`` (the HEART letters the rater
marked, each ``"A"`` or ``"B"`` as shown), ``comment``, ``played`` (the clips the rater
started: ``seeker``, ``a``, ``b``), ``seconds`` (time on the task) and ``answered_at``.
A judging folder's ``human/*.jsonl`` files are read by ``rate`` and ``report`` by themselves.
"""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from voicebench import bootstrap
from voicebench._jsonl import json_lines
from voicebench._model import FrozenModel, read_utf8, validate_record
from voicebench.errors import InputError
from voicebench.judging import DIMENSIONS, PairResult, Verdict
from voicebench.judging.combine import decisions_by_pair

LABELS = {
    "a much better": 2,
    "a slightly better": 1,
    "same": 0,
    "b slightly better": -1,
    "b much better": -2,
}


class HumanJudgment(FrozenModel):
    """One row of a human-judgment file."""

    item_id: str = Field(min_length=1)
    contestant_a: str = Field(min_length=1)
    contestant_b: str = Field(min_length=1)
    rating: int = Field(ge=-2, le=2)
    """+2 A much better ... -2 B much better."""
    rater: str = ""
    task: str = ""
    """The rating page's task id; empty for judgments made elsewhere."""
    repeat: bool = False
    """A second showing of a pair to the same rater: used for consistency only."""
    dimensions: dict[str, Literal["A", "B"]] = Field(default_factory=dict)
    """HEART letters the rater marked, with the side (as shown) that was clearly better."""
    comment: str = Field(default="", max_length=2000)
    played: tuple[Literal["seeker", "a", "b"], ...] = ()
    """The clips the rater started before answering."""
    seconds: float | None = Field(default=None, ge=0)
    """Time on the task, from opening it to answering."""
    answered_at: str = ""

    @field_validator("dimensions")
    @classmethod
    def _letters(cls, marks: dict[str, str]) -> dict[str, str]:
        if not set(marks) <= set(DIMENSIONS):
            raise ValueError(f"keys must be among {', '.join(DIMENSIONS)}")
        return marks

    @field_validator("rating", mode="before")
    @classmethod
    def _label(cls, value):
        if isinstance(value, str):
            key = value.strip().lower()
            if key in LABELS:
                return LABELS[key]
            try:
                return int(key)
            except ValueError:
                raise ValueError(
                    f"unknown rating {value!r}; use one of "
                    f"{', '.join(repr(k) for k in LABELS)} or -2..2"
                ) from None
        return value

    @property
    def preferred(self) -> str | None:
        if self.rating > 0:
            return self.contestant_a
        if self.rating < 0:
            return self.contestant_b
        return None


RATING_LABELS = {
    2: "A much better",
    1: "A slightly better",
    0: "About the same",
    -1: "B slightly better",
    -2: "B much better",
}
"""HEART's five-point scale as people read it, by rating toward A."""


def pair_key(h: HumanJudgment) -> tuple[str, str, str]:
    """The pair a judgment is about: (item, first, second), the contestants sorted."""
    a, b = sorted((h.contestant_a, h.contestant_b))
    return (h.item_id, a, b)


def votes_by_pair(
    humans: Sequence[HumanJudgment],
) -> dict[tuple[str, str, str], dict[str, HumanJudgment]]:
    """Per pair, each rater's vote: its first non-repeat answer (a row without a rater is a
    rater of its own)."""
    out: dict[tuple[str, str, str], dict[str, HumanJudgment]] = defaultdict(dict)
    for n, h in enumerate(humans):
        if not h.repeat:
            out[pair_key(h)].setdefault(h.rater or f"#{n}", h)
    return dict(out)


def majority(votes: dict[str, HumanJudgment]) -> str | None:
    """The contestant more raters preferred; None on a tie or with only "same" votes."""
    c = Counter(h.preferred for h in votes.values() if h.preferred)
    top = c.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def load_human_judgments(path: Path) -> list[HumanJudgment]:
    """A CSV or JSONL file of human judgments; errors name the file, row and field."""
    rows: list[tuple[str, object]] = []
    if path.suffix.lower() in (".jsonl", ".json"):
        # a rater's server killed mid-write leaves a last line cut short: it was never answered
        rows = list(json_lines(path, tail="whole"))
    else:
        reader = csv.DictReader(io.StringIO(read_utf8(path)))
        try:
            missing = {"item_id", "contestant_a", "contestant_b", "rating"} - set(
                reader.fieldnames or []
            )
            if missing:
                raise InputError(
                    f"missing columns: {', '.join(sorted(missing))}", file=path, record="header"
                )
            rows = [
                (f"row {n}", {k: v for k, v in r.items() if k is not None})
                for n, r in enumerate(reader, start=2)
            ]
        except csv.Error as exc:
            raise InputError(
                f"not valid CSV ({exc})", file=path, record=f"line {reader.line_num}"
            ) from None
    out = [validate_record(HumanJudgment, data, file=path, record=rec) for rec, data in rows]
    if not out:
        raise InputError("no judgments in the file", file=path)
    return out


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa from a (subjects, categories) count matrix. Subjects may have different
    numbers of ratings (each at least 2): a subject's agreement uses its own count, and the
    category shares pool every rating."""
    counts = np.asarray(counts, dtype=float)
    if counts.shape[0] == 0:
        return None
    n = counts.sum(axis=1)
    if np.any(n < 2):
        raise ValueError("every subject needs at least 2 ratings")
    p_j = counts.sum(axis=0) / counts.sum()
    P_i = (np.sum(counts * counts, axis=1) - n) / (n * (n - 1))
    P_bar, P_e = P_i.mean(), np.sum(p_j * p_j)
    if P_e == 1.0:
        return None  # everyone used one category: agreement is trivially total, kappa undefined
    return float((P_bar - P_e) / (1 - P_e))


def krippendorff_alpha_nominal(units: Sequence[Sequence[object]]) -> float | None:
    """Krippendorff's alpha for nominal data; each unit lists the values its raters gave
    (missing ratings simply absent). Units with fewer than two values are ignored."""
    o: dict[tuple[object, object], float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for a, b in combinations(range(m), 2):
            o[(values[a], values[b])] += 1 / (m - 1)
            o[(values[b], values[a])] += 1 / (m - 1)
    n_c: dict[object, float] = defaultdict(float)
    for (c, _), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    if n <= 1:
        return None
    d_o = sum(v for (c, k), v in o.items() if c != k) / n
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n * (n - 1))
    if d_e == 0:
        return None
    return float(1 - d_o / d_e)


class Agreement(FrozenModel):
    """Agreement figures, each with a bootstrap 95% interval where it has one."""

    judges: tuple[str, ...]
    pairwise: dict[str, tuple[float | None, float | None, float | None, int]] = Field(
        default_factory=dict
    )
    """"judge1 | judge2" -> (agreement, CI low, CI high, pairs both decided)."""
    three_way: tuple[float | None, float | None, float | None, int] | None = None
    fleiss_kappa: float | None = None
    fleiss_kappa_by_dimension: dict[str, float | None] = Field(default_factory=dict)
    krippendorff_alpha: float | None = None
    human_agreement: tuple[float | None, float | None, float | None, int] | None = None
    """Ensemble winner vs human majority: (agreement, CI low, CI high, pairs)."""
    human_judgments: int = 0


def share_with_ci(rows: list[tuple[str, bool]], rounds: int, seed: int):
    """Share of True with a bootstrap CI over items; rows are (item_id, agreed)."""
    if not rows:
        return (None, None, None, 0)
    items = sorted({i for i, _ in rows})
    by_item = np.array(
        [[sum(a for i, a in rows if i == it), sum(1 for i, _ in rows if i == it)] for it in items],
        dtype=float,
    )
    share, lo, hi = bootstrap.cluster_ratio(by_item[:, 0], by_item[:, 1], rounds=rounds, seed=seed)
    return (round(share, 4), round(lo, 4), round(hi, 4), len(rows))


def agreement_report(
    verdicts: Sequence[Verdict],
    pairs: Sequence[PairResult],
    *,
    humans: Sequence[HumanJudgment] = (),
    rounds: int = 1000,
    seed: int = 0,
) -> Agreement:
    decisions = decisions_by_pair(verdicts)
    judges = tuple(sorted({v.judge for v in verdicts}))
    pairwise = {}
    for j1, j2 in combinations(judges, 2):
        rows = [
            (p[0], d[j1].winner == d[j2].winner)
            for p, d in decisions.items()
            if j1 in d and j2 in d and d[j1].winner and d[j2].winner
        ]
        pairwise[f"{j1} | {j2}"] = share_with_ci(rows, rounds, seed)
    three = None
    if len(judges) >= 3:
        rows = []
        for p, d in decisions.items():
            ws = [d[j].winner for j in judges if j in d]
            if len(ws) == len(judges) and all(ws):
                rows.append((p[0], len(set(ws)) == 1))
        three = share_with_ci(rows, rounds, seed)
    kappa, kappa_dims, alpha = None, {}, None
    if len(judges) >= 2:
        full = [
            (p, d)
            for p, d in decisions.items()
            if len(d) == len(judges) and all(x.winner for x in d.values())
        ]
        if full:
            kappa = fleiss_kappa(
                np.array(
                    [
                        [
                            sum(x.winner == p[1] for x in d.values()),
                            sum(x.winner == p[2] for x in d.values()),
                        ]
                        for p, d in full
                    ]
                )
            )
            for dim in DIMENSIONS:
                kappa_dims[dim] = fleiss_kappa(
                    np.array(
                        [
                            [
                                sum(x.dimensions.get(dim) == p[1] for x in d.values()),
                                sum(x.dimensions.get(dim) == p[2] for x in d.values()),
                                sum(x.dimensions.get(dim) is None for x in d.values()),
                            ]
                            for p, d in full
                        ]
                    )
                )
        alpha = krippendorff_alpha_nominal(
            [[x.winner for x in d.values() if x.winner] for d in decisions.values()]
        )
    human = None
    if humans:
        result = {(p.item_id, p.first, p.second): p.winner for p in pairs}
        rows = [
            (key[0], result[key] == winner)
            for key, votes in votes_by_pair(humans).items()
            if (winner := majority(votes)) is not None and result.get(key)
        ]
        human = share_with_ci(rows, rounds, seed)
    return Agreement(
        judges=judges,
        pairwise=pairwise,
        three_way=three,
        fleiss_kappa=kappa,
        fleiss_kappa_by_dimension=kappa_dims,
        krippendorff_alpha=alpha,
        human_agreement=human,
        human_judgments=len(humans),
    )
