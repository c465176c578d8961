"""From a judging folder to a ``RatingTable``: Elo with both intervals, win rates, latency.

Inputs are the judging folder's replies and verdicts (combined into pair results by the
judging rules) and the run logs they came from (latency per turn). Written as
``ratings.json`` in the judging folder.

- Win rate: pairs won / pairs decided, per contestant. Undecided pairs (position flips,
  failed verdicts, no ensemble majority) count in neither.
- Dimension win rate (H, E, A, R, T): of the decided pairs in which that dimension was
  given to one side, the share given to this contestant.
- The same, split by regular and adversarial items.
- Latency: TTFT and TTFA medians over every timed turn of the contestant's run; budget
  goodput is the share of the run's turns (failed ones included, as misses) with
  TTFA <= ``budget_ttfa_ms`` and TTFT <= ``budget_ttft_ms``.
- Elo within budget: Bradley-Terry refitted on the decided pairs whose two replies (final
  turns) were both within budget; human replies count as within budget.
- Latency-adjusted Elo: the contextual fit in ``contextual.py``.
- People: the folder's ``human/`` files and ``--human-judgments`` (``people.py``).
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections import defaultdict
from pathlib import Path

import numpy as np
from pydantic import Field

from voicebench._jsonl import write_atomic
from voicebench._model import FrozenModel, Versioned
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.judging import (
    DIMENSIONS,
    judged_items,
    judged_runs,
    read_judging_header,
)
from voicebench.judging.models import JudgedUnit
from voicebench.metrics.latency import measured, median_ms, within_budgets
from voicebench.rating.agreement import Agreement, agreement_report
from voicebench.rating.bt import (
    DEFAULT_PRIOR,
    asymptotic_half_width,
    bootstrap_elo,
    fit,
    to_elo,
    win_matrices,
)
from voicebench.rating.contextual import fit_contextual
from voicebench.rating.inputs import inputs_sha256
from voicebench.rating.people import PeopleSummary, folder_judgments, people_summary
from voicebench.rating.wins import item_wins
from voicebench.runlog import read_header, read_turns

RATINGS_FILE = "ratings.json"


RATING_SCHEMA_VERSION = 1


class ContestantRating(FrozenModel):
    contestant: str
    kind: str
    """``agent`` or ``human``."""
    elo: float
    elo_ci_asymptotic: tuple[float, float]
    """95%: Elo +- 1.96 sqrt(1/n) on the log-strength scale (n = decided pairs), as in HEART."""
    elo_ci_bootstrap: tuple[float, float] | None
    """95% percentile interval over refits on items resampled with replacement."""
    decided: int
    """Decided pairs this contestant was in."""
    wins: int
    win_rate: float | None
    win_rate_regular: float | None
    win_rate_adversarial: float | None
    dimension_win_rates: dict[str, float | None]
    dimension_win_rates_regular: dict[str, float | None]
    dimension_win_rates_adversarial: dict[str, float | None]
    ttft_p50_ms: float | None = None
    ttfa_p50_ms: float | None = None
    goodput: float | None = None
    """Share of the run's turns within both budgets."""
    elo_within_budget: float | None = None
    elo_latency_adjusted: float | None = None


class RatingTable(Versioned):
    schema_version: int = RATING_SCHEMA_VERSION
    created_at: str
    judging_dir: str
    judges: tuple[str, ...]
    smoke: bool
    """True when the verdicts came from an offline smoke judge: the ratings mean nothing."""
    rubric_sha256: str
    unit: JudgedUnit = "reply"
    """What was compared: items' final replies, or whole simulated calls (within budget then
    means every turn of the call was)."""
    prior: float
    bootstrap_rounds: int
    seed: int
    budget_ttfa_ms: float
    budget_ttft_ms: float
    items: int
    decided: int
    undecided: int
    latency_beta: float | None = None
    """Log-odds change per unit of ln(TTFA / 1 s) in the contextual fit."""
    latency_beta_se: float | None = None
    latency_comparisons: int = 0
    ratings: tuple[ContestantRating, ...] = Field(default=())
    agreement: Agreement | None = None
    """Judge-judge and judge-human agreement (None with one judge and no human file)."""
    people: PeopleSummary | None = None
    """The people's ladder, their agreement with the judges and with each other (None
    without human judgments)."""
    inputs_sha256: str | None = None
    """Of everything the table was fitted from (settings, judging header, replies, verdicts,
    the runs' turns, the human judgments): a table whose inputs still hash the same is
    reused as it is (``current_ratings``)."""


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _dimension_rates(pairs, name: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for d in DIMENSIONS:
        given = [p for p in pairs if name in (p.first, p.second) and p.dimensions.get(d)]
        out[d] = _rate(sum(p.dimensions[d] == name for p in given), len(given))
    return out


def _latency(run_dirs, budget_ttfa_ms, budget_ttft_ms, *, whole_calls=False):
    """Per agent name: (ttft p50, ttfa p50, goodput) and per (name, item): final-turn timing
    (with ``whole_calls``, an item is within budget when every turn of its call is).
    A contestant whose items were replayed in several runs has them all counted together."""
    summary, final = {}, {}
    by_name: dict[str, list] = defaultdict(list)
    for run_dir in run_dirs:
        by_name[read_header(run_dir).agent.name] += read_turns(run_dir)

    for name, records in by_name.items():
        summary[name] = (
            median_ms(measured(records, "ttft_ms")),
            median_ms(measured(records, "ttfa_ms")),
            within_budgets(records, budget_ttfa_ms=budget_ttfa_ms, budget_ttft_ms=budget_ttft_ms),
        )
        within: dict[str, bool] = defaultdict(lambda: True)
        for r in records:
            within[r.dialogue_id] &= r.within_budgets(budget_ttfa_ms, budget_ttft_ms)
        for r in records:
            if r.final and not r.repeat:  # a repeated run's first pass, the one judged
                final[(name, r.dialogue_id)] = (
                    within[r.dialogue_id]
                    if whole_calls
                    else r.within_budgets(budget_ttfa_ms, budget_ttft_ms),
                    r.timing.ttfa_ms if r.timing else None,
                )
    return summary, final


def rate_judging(
    judging_dir: Path,
    *,
    rounds: int = 1000,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    human_judgments: Path | None = None,
    write: bool = True,
) -> RatingTable:
    """Fit the ratings of one judging folder and (with ``write``) write ``ratings.json`` there."""
    header = read_judging_header(judging_dir)
    run_dirs = judged_runs(judging_dir, header)
    inputs = inputs_sha256(
        judging_dir,
        rounds=rounds,
        seed=seed,
        prior=prior,
        budget_ttfa_ms=budget_ttfa_ms,
        budget_ttft_ms=budget_ttft_ms,
        human_judgments=human_judgments,
    )
    items = judged_items(run_dirs)
    adversarial = {i for i, d in items.items() if d.adversarial}
    wins = item_wins(judging_dir)
    replies, kinds, names, verdicts = wins.replies, wins.kinds, wins.names, wins.verdicts
    pairs, decided, item_ids = wins.pairs, wins.decided, wins.item_ids
    win, lose, strength, item_W = wins.win, wins.lose, wins.strength, wins.item_W
    items_arr = wins.items
    elo = to_elo(fit(item_W.sum(axis=0), prior=prior))
    boot = bootstrap_elo(item_W, rounds=rounds, seed=seed, prior=prior) if rounds else None
    n_dec = np.bincount(win, minlength=len(names)) + np.bincount(lose, minlength=len(names))
    half = asymptotic_half_width(n_dec)

    latency, final = _latency(
        run_dirs, budget_ttfa_ms, budget_ttft_ms, whole_calls=header.unit == "call"
    )

    def ok(name: str, item: str) -> bool:
        return kinds[name] == "human" or final.get((name, item), (False, None))[0]

    keep = np.array([ok(p.first, p.item_id) and ok(p.second, p.item_id) for p in decided])
    elo_budget = None
    if keep.any():
        Wb = win_matrices(
            items_arr[keep], win[keep], lose[keep], strength[keep], len(item_ids), len(names)
        ).sum(axis=0)
        elo_budget = to_elo(fit(Wb, prior=prior))
        seen = np.bincount(win[keep], minlength=len(names)) + np.bincount(
            lose[keep], minlength=len(names)
        )

    def x(name: str, item: str) -> float | None:
        ttfa = final.get((name, item), (False, None))[1]
        return float(np.log(ttfa / 1000.0)) if ttfa else None

    xs = [
        (x(names[w], item_ids[i]), x(names[lo], item_ids[i]))
        for w, lo, i in zip(win, lose, items_arr, strict=True)
    ]
    ctx_rows = [k for k, (a, b) in enumerate(xs) if a is not None and b is not None]
    ctx = None
    if len(ctx_rows) >= 2:
        rows = np.array(ctx_rows)
        ctx = fit_contextual(
            win[rows],
            lose[rows],
            strength[rows],
            np.array([xs[k][0] for k in ctx_rows]),
            np.array([xs[k][1] for k in ctx_rows]),
            len(names),
            prior=prior,
        )
        ctx_seen = set(win[rows]) | set(lose[rows])
        ctx_elo = to_elo(ctx.t[sorted(ctx_seen)])
        ctx_by = dict(zip(sorted(ctx_seen), ctx_elo, strict=True))

    by_split: dict[str, list] = defaultdict(list)
    for p in decided:
        by_split["adversarial" if p.item_id in adversarial else "regular"].append(p)
    ratings = []
    for k, name in enumerate(names):

        def wins_in(ps, name=name) -> tuple[int, int]:
            mine = [p for p in ps if name in (p.first, p.second)]
            return sum(p.winner == name for p in mine), len(mine)

        w_all, n_all = wins_in(decided)
        w_reg, n_reg = wins_in(by_split["regular"])
        w_adv, n_adv = wins_in(by_split["adversarial"])
        lat = latency.get(name, (None, None, None))
        ratings.append(
            ContestantRating(
                contestant=name,
                kind=kinds[name],
                elo=round(float(elo[k]), 1),
                elo_ci_asymptotic=(
                    round(float(elo[k] - half[k]), 1),
                    round(float(elo[k] + half[k]), 1),
                ),
                elo_ci_bootstrap=(
                    None
                    if boot is None
                    else tuple(round(float(v), 1) for v in np.percentile(boot[:, k], [2.5, 97.5]))
                ),
                decided=int(n_dec[k]),
                wins=w_all,
                win_rate=_rate(w_all, n_all),
                win_rate_regular=_rate(w_reg, n_reg),
                win_rate_adversarial=_rate(w_adv, n_adv),
                dimension_win_rates=_dimension_rates(decided, name),
                dimension_win_rates_regular=_dimension_rates(by_split["regular"], name),
                dimension_win_rates_adversarial=_dimension_rates(by_split["adversarial"], name),
                ttft_p50_ms=lat[0],
                ttfa_p50_ms=lat[1],
                goodput=lat[2],
                elo_within_budget=(
                    round(float(elo_budget[k]), 1) if elo_budget is not None and seen[k] else None
                ),
                elo_latency_adjusted=(
                    round(float(ctx_by[k]), 1) if ctx is not None and k in ctx_by else None
                ),
            )
        )
    ratings.sort(key=lambda r: -r.elo)
    agreement = None
    humans = folder_judgments(judging_dir, human_judgments)
    if len(header.judges) > 1 or humans:
        agreement = agreement_report(
            verdicts, pairs, humans=humans, rounds=rounds or 1000, seed=seed
        )
    people = (
        people_summary(humans, verdicts, pairs, replies, rounds=rounds, seed=seed, prior=prior)
        if humans
        else None
    )
    table = RatingTable(
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        judging_dir=str(judging_dir),
        judges=header.judges,
        unit=header.unit,
        smoke=header.smoke,
        rubric_sha256=header.rubric_sha256,
        prior=prior,
        bootstrap_rounds=rounds,
        seed=seed,
        budget_ttfa_ms=budget_ttfa_ms,
        budget_ttft_ms=budget_ttft_ms,
        items=len(item_ids),
        decided=len(decided),
        undecided=len(pairs) - len(decided),
        latency_beta=round(ctx.beta, 4) if ctx else None,
        latency_beta_se=round(ctx.beta_se, 4) if ctx and ctx.beta_se is not None else None,
        latency_comparisons=ctx.comparisons if ctx else 0,
        ratings=tuple(ratings),
        agreement=agreement,
        people=people,
        inputs_sha256=inputs,
    )
    if write:
        write_atomic(judging_dir / RATINGS_FILE, table.model_dump_json(indent=2) + "\n")
    return table


RATING_DEFAULTS: dict[str, float] = {
    name: inspect.signature(rate_judging).parameters[name].default
    for name in ("rounds", "seed", "prior", "budget_ttfa_ms", "budget_ttft_ms")
}
"""``rate_judging``'s settings, with the defaults its signature gives them."""


def current_ratings(
    judging_dir: Path, *, human_judgments: Path | None = None, **settings: float
) -> RatingTable:
    """The folder's ``ratings.json`` when it was fitted from exactly these inputs and settings
    (``rate_judging``'s, see ``RATING_DEFAULTS``); otherwise a fresh fit (not written)."""
    unknown = set(settings) - set(RATING_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown rating settings: {sorted(unknown)}")
    full = {**RATING_DEFAULTS, **settings}
    path = judging_dir / RATINGS_FILE
    if path.is_file():
        try:
            stored = RatingTable.model_validate_json(path.read_bytes())
        except ValueError:
            stored = None
        expected = inputs_sha256(judging_dir, human_judgments=human_judgments, **full)
        if stored is not None and stored.inputs_sha256 == expected:
            return stored
    return rate_judging(
        judging_dir,
        rounds=int(full["rounds"]),
        seed=int(full["seed"]),
        prior=full["prior"],
        budget_ttfa_ms=full["budget_ttfa_ms"],
        budget_ttft_ms=full["budget_ttft_ms"],
        human_judgments=human_judgments,
        write=False,
    )
