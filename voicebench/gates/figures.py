"""The figures a CI gate reads off a run folder or a judging folder, each with its 95% interval.

A run folder (``run.json``) gives the latency percentiles, the failed and within-budget shares,
the ASR word error rate, the replies' stalls after their first audio, their speaking rate and
clipping, each with its
interval over resampled dialogues (a dialogue's turns kept together, as in the report; none
when there are too few dialogues to tell, ``bootstrap.clusters_needed``) and, with the
interruption scenarios, the stop latency and the yield, false-yield and premature-reply
shares. A judging folder (``judging.json``) gives each
contestant's Elo (bootstrap interval over items, the asymptotic one when there is none) and
the judge's measured gold accuracy (its card's Wilson interval). ``elo_difference_figure``
gives one contestant's Elo minus another's, which the pytest plugin's ``expect_not_below``
decides as a gate.

Shares are in per cent. A figure that the folder cannot give is absent from the mapping; the
gate that asks for it says why.
"""

from __future__ import annotations

from pathlib import Path

from voicebench import bootstrap
from voicebench._model import FrozenModel
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.errors import InputError
from voicebench.metrics import QUANTILES, Distribution
from voicebench.metrics.latency import agent_latency
from voicebench.metrics.repeats import by_pass
from voicebench.metrics.scenarios import Interval
from voicebench.metrics.summary import sound_summary, stall_summary
from voicebench.runlog import RunHeader, TurnRecord, read_header, read_turns

FIGURE_KEYS: tuple[str, ...] = (
    *(f"{name}_p{q}_ms" for name in ("ttft", "ttfa") for q in QUANTILES),
    "failed_pct",
    "within_budget_pct",
    "wer_pct",
    "stall_ms",
    "stalled_pct",
    "speaking_rate_wpm",
    "clipped_pct",
    "stop_latency_p50_ms",
    "stop_latency_p90_ms",
    "yielded_pct",
    "answered_pct",
    "false_yield_pct",
    "premature_pct",
    "elo",
    "judge_accuracy_pct",
)
"""Every figure a gate can name."""


class Figure(FrozenModel):
    """One measured figure and its 95% interval."""

    key: str
    """How gates name it: ``ttfa_p90_ms``, ``failed_pct``, ``elo``..."""
    value: float
    low: float | None
    high: float | None
    """The interval; None when there are too few dialogues to tell."""
    n: int
    """Observations behind it (turns, pairs)."""
    unit: str = ""
    clusters: int | None = None
    """Dialogues the interval resampled, with their turns (None: observations one by one)."""

    @property
    def too_few(self) -> bool:
        """Measured, but on too few dialogues for an interval."""
        return self.low is None or self.high is None


def _interval(
    key: str, iv: Interval | None, n: int, unit: str, scale: float = 1.0
) -> Figure | None:
    if iv is None:
        return None
    value, low, high = iv
    return Figure(
        key=key,
        value=round(value * scale, 3),
        low=None if low is None else round(low * scale, 3),
        high=None if high is None else round(high * scale, 3),
        n=n,
        unit=unit,
    )


def _quantiles(name: str, d: Distribution) -> list[Figure]:
    return [
        Figure(
            key=f"{name}_p{q.q}_ms",
            value=q.value_ms,
            low=None if q.ci_ms is None else q.ci_ms[0],
            high=None if q.ci_ms is None else q.ci_ms[1],
            n=d.n,
            unit="ms",
            clusters=d.clusters,
        )
        for q in d.quantiles
    ]


def _share(key: str, hits: list[float], dialogues: list[str]) -> Figure | None:
    """A share of turns (in per cent) with its interval over resampled dialogues."""
    if not hits:
        return None
    value, low, high = bootstrap.clustered_share(hits, dialogues)
    return Figure(
        key=key,
        value=round(100 * value, 3),
        low=None if low is None else round(100 * low, 3),
        high=None if high is None else round(100 * high, 3),
        n=len(hits),
        unit="%",
        clusters=bootstrap.count_clusters(dialogues),
    )


def read_run(run_dir: Path) -> tuple[RunHeader, list[TurnRecord]]:
    """A run folder's header and turns; not a run folder, or one with no turn yet, is bad
    input naming the folder."""
    if not (run_dir / "run.json").is_file():
        raise InputError("not a run folder (no run.json)", file=run_dir)
    records = read_turns(run_dir)
    if not records:
        raise InputError("the run has no turns yet", file=run_dir)
    return read_header(run_dir), records


def run_figures(
    run_dir: Path, *, budget_ttft_ms: float = TTFT_BUDGET_MS, budget_ttfa_ms: float = TTFA_BUDGET_MS
) -> dict[str, Figure]:
    """Every figure of one run folder, by key (a repeated run's passes pooled)."""
    header, records = read_run(run_dir)
    return figures_of(
        run_dir, header, records, budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms
    )


def figures_by_pass(
    run_dir: Path, *, budget_ttft_ms: float = TTFT_BUDGET_MS, budget_ttfa_ms: float = TTFA_BUDGET_MS
) -> list[dict[str, Figure]]:
    """Every figure of each pass of a repeated run (``--repeat``), pass by pass; a run of one
    pass is bad input naming the folder."""
    header, records = read_run(run_dir)
    passes = by_pass(records)
    if len(passes) < 2:
        raise InputError(
            "the run has one pass: every-repeat gates need a run replayed with --repeat K",
            file=run_dir,
        )
    return [
        figures_of(
            run_dir, header, rows, budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms
        )
        for rows in passes.values()
    ]


def figures_of(
    run_dir: Path,
    header: RunHeader,
    records: list[TurnRecord],
    *,
    budget_ttft_ms: float,
    budget_ttfa_ms: float,
) -> dict[str, Figure]:
    """Every figure of these turns of a run, by key."""
    latency = agent_latency(
        run_dir,
        header,
        records,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
        turn_timeout_ms=header.turn_timeout_s * 1000.0,
    )
    out: list[Figure | None] = [
        *_quantiles("ttft", latency.ttft),
        *_quantiles("ttfa", latency.ttfa),
    ]
    dialogues = [r.dialogue_id for r in records]
    out.append(_share("failed_pct", [float(r.error is not None) for r in records], dialogues))
    within = [float(r.within_budgets(budget_ttfa_ms, budget_ttft_ms)) for r in records]
    out.append(_share("within_budget_pct", within, dialogues))
    heard = [(r.asr_wer, r.dialogue_id) for r in records if r.asr_wer is not None]
    out.append(_share("wer_pct", [w for w, _ in heard], [d for _, d in heard]))
    out += _stall_figures(records) + _sound_figures(records)
    for group in latency.scenarios:
        if group.group == "barge-in":
            m = group.overlapped
            out += [
                _interval("stop_latency_p50_ms", group.stop_p50_ms, m, "ms"),
                _interval("stop_latency_p90_ms", group.stop_p90_ms, m, "ms"),
                _interval("yielded_pct", group.yielded, m, "%", 100.0),
                _interval("answered_pct", group.answered, m, "%", 100.0),
            ]
        elif group.group == "backchannel":
            out.append(_interval("false_yield_pct", group.false_yield, group.overlapped, "%", 100))
        elif group.group == "pause":
            out.append(_interval("premature_pct", group.premature, group.turns, "%", 100.0))
    return {f.key: f for f in out if f is not None}


def _stall_figures(records: list[TurnRecord]) -> list[Figure | None]:
    """The longest stall of any reply (``stall_ms``: a fact of these turns, so its interval is
    the value itself), and the share of the replies' playing time stalled (``stalled_pct``,
    each reply's share averaged, with its interval over dialogues); none without a reply that
    played (``timing.stalls``)."""
    stalls = stall_summary(records)
    if stalls is None:
        return []
    return [
        Figure(
            key="stall_ms",
            value=stalls.longest_ms,
            low=stalls.longest_ms,
            high=stalls.longest_ms,
            n=stalls.replies,
            unit="ms",
            clusters=stalls.dialogues,
        ),
        _percent(
            "stalled_pct",
            stalls.stalled_share,
            stalls.stalled_share_ci,
            stalls.replies,
            stalls.dialogues,
            digits=3,
        ),
    ]


def _sound_figures(records: list[TurnRecord]) -> list[Figure | None]:
    """The replies' median speaking rate (``speaking_rate_wpm``) and the share of their
    samples clipped (``clipped_pct``), each with its interval over dialogues
    (``timing.sound``)."""
    sound = sound_summary(records)
    if sound is None:
        return []
    out: list[Figure | None] = []
    if sound.words_per_minute is not None:
        low, high = sound.words_per_minute_ci or (None, None)
        out.append(
            Figure(
                key="speaking_rate_wpm",
                value=sound.words_per_minute,
                low=low,
                high=high,
                n=sound.rated,
                unit="wpm",
                clusters=sound.dialogues,
            )
        )
    out.append(
        _percent(
            "clipped_pct",
            sound.clipped_share,
            sound.clipped_share_ci,
            sound.replies,
            sound.dialogues,
            digits=4,
        )
    )
    return out


def _percent(
    key: str,
    share: float,
    ci: tuple[float, float] | None,
    n: int,
    clusters: int,
    *,
    digits: int,
) -> Figure:
    """A share of the replies in per cent, with its interval over dialogues (None: too few)."""
    low, high = ci or (None, None)
    return Figure(
        key=key,
        value=round(100 * share, digits),
        low=None if low is None else round(100 * low, digits),
        high=None if high is None else round(100 * high, digits),
        n=n,
        unit="%",
        clusters=clusters,
    )


def judging_figures(judging_dir: Path, contestant: str | None) -> dict[str, Figure]:
    """The judge's gold accuracy and, with ``contestant``, its Elo."""
    from voicebench.judging.cards import card_of_judging
    from voicebench.rating import NothingToRateError, current_ratings

    out: dict[str, Figure] = {}
    card = card_of_judging(judging_dir)
    if card is not None and card.pairs:
        out["judge_accuracy_pct"] = Figure(
            key="judge_accuracy_pct",
            value=round(100 * card.accuracy, 2),
            low=round(100 * card.accuracy_low, 2),
            high=round(100 * card.accuracy_high, 2),
            n=card.pairs,
            unit="%",
        )
    if contestant is None:
        return out
    try:
        table = current_ratings(judging_dir)
    except NothingToRateError as exc:
        raise InputError(f"no ratings: {exc}", file=judging_dir) from None
    names = [r.contestant for r in table.ratings]
    rating = next(
        (r for r in table.ratings if contestant in (r.contestant, r.contestant.split("/")[-1])),
        None,
    )
    if rating is None:
        raise InputError(
            f"no contestant {contestant!r} in its ratings (there are: {', '.join(names)})",
            field="--contestant",
        )
    low, high = rating.elo_ci_bootstrap or rating.elo_ci_asymptotic
    out["elo"] = Figure(
        key="elo", value=rating.elo, low=low, high=high, n=rating.decided, unit="Elo"
    )
    return out


def elo_difference_figure(judging_dir: Path, base: str, new: str) -> Figure:
    """``new``'s HEART Elo minus ``base``'s, fitted together, with its 95% interval over items
    resampled (``rating.elo_difference``); ``n``: the decided pairs either is in, ``clusters``:
    their items. On fewer items than an interval needs (``bootstrap.clusters_needed``: 6, as
    for a median or a share) it has no interval, as every figure: too few to tell."""
    from voicebench.rating import NothingToRateError, elo_difference
    from voicebench.rating.wins import item_wins

    try:
        pairs = [p for p in item_wins(judging_dir).decided if {p.first, p.second} & {base, new}]
    except NothingToRateError:
        pairs = []
    items = bootstrap.count_clusters([p.item_id for p in pairs])
    if not pairs:  # every pair undecided: nothing to fit
        return Figure(
            key="elo_difference", value=0, low=None, high=None, n=0, unit="Elo", clusters=0
        )
    value, low, high = elo_difference(judging_dir, base, new)
    enough = items >= bootstrap.clusters_needed()
    return Figure(
        key="elo_difference",
        value=round(value, 1),
        low=round(low, 1) if enough else None,
        high=round(high, 1) if enough else None,
        n=len(pairs),
        unit="Elo",
        clusters=items,
    )


def folder_figures(
    path: Path,
    *,
    contestant: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
) -> dict[str, Figure]:
    """The figures of a run folder or of a judging folder."""
    if (path / "run.json").is_file():
        return run_figures(path, budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms)
    if (path / "judging.json").is_file():
        return judging_figures(path, contestant)
    raise InputError(
        "neither a run folder (run.json) nor a judging folder (judging.json)", file=path
    )
