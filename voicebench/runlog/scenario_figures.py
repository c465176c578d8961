"""Each scenario's figures over a run's turns, with 95% intervals: the table printed after a run
played with ``--scenario``.

Turns are grouped by what they played: ``clean`` (no scenario), ``noise pink 10 dB``,
``phone-line``, ``barge-in``... TTFA's median has a percentile-bootstrap interval over the
group's turns; the ASR word error rate is all errors over all reference words, with turns
resampled whole.

The overlap scenarios (``voicebench.scenarios.overlap``) get a table of their own, over the
turns where what they test happened (the agent was talking when the seeker barged in or said
the word): the stop latency's median and 90th percentile with bootstrap intervals, and
yields, false yields and premature replies as shares of turns with Wilson score intervals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from rich.table import Table
from scipy import stats

from voicebench._model import FrozenModel
from voicebench.bootstrap import clustered_share, percentiles
from voicebench.runlog.models import TurnRecord
from voicebench.text import word_errors

Interval = tuple[float, float, float]
"""(point, low, high)."""


class ScenarioFigures(FrozenModel):
    """One group of a run's turns, by what they played (``report.json`` carries these)."""

    group: str
    """What the turns played: ``clean``, ``noise pink 10 dB``, ``phone-line``..."""
    turns: int
    failed: int
    ttfa_p50_ms: Interval | None
    """TTFA median, with its 95% bootstrap interval."""
    wer: Interval | None
    """The ASR word error rate (a share), with its interval."""
    snr_db: float | None = None
    """noise: the SNR the group was asked for (the curves' x axis)."""
    kind: str | None = None
    """noise: white, pink or babble."""
    measured: str
    """What the scenario measured on these turns, for a person (mean SNR, packets lost)."""
    overlapped: int = 0
    """barge-in, backchannel: turns where the agent was talking when the seeker spoke."""
    stop_p50_ms: Interval | None = None
    """barge-in: the stop latency's median."""
    stop_p90_ms: Interval | None = None
    yielded: Interval | None = None
    """barge-in: the share of turns where the agent stopped within 2 s."""
    talk_over_s: float | None = None
    """barge-in: mean seconds both spoke at once."""
    answered: Interval | None = None
    """barge-in: the share of turns where it answered the interruption."""
    false_yield: Interval | None = None
    """backchannel: the share of turns where it stopped for the word."""
    lost_s: float | None = None
    """backchannel: median seconds lost to a false yield."""
    premature: Interval | None = None
    """pause: the share of turns where it spoke before the seeker had finished."""
    early_ms: float | None = None
    """pause: median time by which a premature reply came too early."""


def group_of(record: TurnRecord) -> str:
    s = record.scenario
    if s is None:
        return "clean"
    if s.name == "noise":
        return f"noise {s.params['kind']} {float(s.params['snr_db']):g} dB"
    return s.name


def _measured(records: Sequence[TurnRecord]) -> str:
    outcomes = [r.scenario for r in records if r.scenario is not None]

    def mean(field: str) -> float | None:
        values = [v for o in outcomes if (v := getattr(o, field)) is not None]
        return float(np.mean(values)) if values else None

    parts = []
    if (snr := mean("snr_db")) is not None:
        parts.append(f"SNR {snr:.1f} dB")
    if (up := mean("uplink_loss_pct")) is not None:
        parts.append(f"lost {up:.1f}% up")
    if (down := mean("downlink_loss_pct")) is not None:
        parts.append(f"{down:.1f}% down")
    if (delay := mean("line_delay_ms")) is not None:
        parts.append(f"+{delay:,.0f} ms line")
    return ", ".join(parts)


def _noise(records: Sequence[TurnRecord]) -> dict:
    s = records[0].scenario
    if s is None or s.name != "noise":
        return {}
    return {"snr_db": float(s.params["snr_db"]), "kind": str(s.params["kind"])}


def wilson(successes: int, trials: int) -> Interval | None:
    """A share of trials with its 95% Wilson score interval."""
    if trials == 0:
        return None
    ci = stats.binomtest(successes, trials).proportion_ci(method="wilson")
    return successes / trials, float(ci.low), float(ci.high)


def _overlap(records: Sequence[TurnRecord]) -> dict:
    outcomes = [r.scenario for r in records if r.scenario is not None]
    hit = [o for o in outcomes if o.agent_speaking]

    def share(field: str, among) -> Interval | None:
        values = [getattr(o, field) for o in among if getattr(o, field) is not None]
        return wilson(sum(map(bool, values)), len(values))

    def median(field: str, among) -> float | None:
        values = [v for o in among if (v := getattr(o, field)) is not None]
        return float(np.median(values)) if values else None

    out: dict = {"overlapped": len(hit)}
    stops = [o.stop_ms for o in hit if o.stop_ms is not None]
    if stops:
        point, low, high = percentiles(stops, [50, 90])
        out["stop_p50_ms"] = (float(point[0]), float(low[0]), float(high[0]))
        out["stop_p90_ms"] = (float(point[1]), float(low[1]), float(high[1]))
        out["talk_over_s"] = float(np.mean([o.talk_over_s or 0.0 for o in hit]))
    out["yielded"] = share("yielded", hit)
    out["answered"] = share("answered", hit)
    out["false_yield"] = share("false_yield", hit)
    out["lost_s"] = median("lost_s", hit)
    out["premature"] = share("premature", outcomes)
    out["early_ms"] = median("early_ms", outcomes)
    return out


def scenario_figures(records: Sequence[TurnRecord]) -> list[ScenarioFigures]:
    """One row per group of turns, clean first, then by name."""
    groups: dict[str, list[TurnRecord]] = defaultdict(list)
    for r in records:
        groups[group_of(r)].append(r)
    rows = []
    for name in sorted(groups, key=lambda g: (g != "clean", g)):
        turns = groups[name]
        ttfa = [t.ttfa_ms for r in turns if (t := r.timing) and t.ttfa_ms is not None]
        p50 = None
        if ttfa:
            point, low, high = percentiles(ttfa, [50])
            p50 = (float(point[0]), float(low[0]), float(high[0]))
        counts = [word_errors(r.user_text, r.user_transcript) for r in turns if r.user_transcript]
        counts = [(e, n) for e, n in counts if n]
        wer = clustered_share([e for e, _ in counts], [n for _, n in counts]) if counts else None
        rows.append(
            ScenarioFigures(
                group=name,
                turns=len(turns),
                failed=sum(r.error is not None for r in turns),
                ttfa_p50_ms=p50,
                wer=wer,
                **_noise(turns),
                measured=_measured(turns),
                **_overlap(turns),
            )
        )
    return rows


def _interval(v: Interval | None, scale: float = 1.0, fmt: str = ",.0f") -> str:
    if v is None:
        return "-"
    point, low, high = (x * scale for x in v)
    return f"{point:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def scenario_table(rows: Sequence[ScenarioFigures], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("played")
    for name in ("turns", "failed", "TTFA p50 ms [95% CI]", "ASR WER % [95% CI]"):
        table.add_column(name, justify="right")
    table.add_column("measured")
    for r in rows:
        table.add_row(
            r.group,
            str(r.turns),
            str(r.failed),
            _interval(r.ttfa_p50_ms),
            _interval(r.wer, 100.0, ".1f"),
            r.measured,
        )
    return table


OVERLAP_GROUPS = ("barge-in", "backchannel", "pause")


def _unit(text: str, unit: str) -> str:
    return text if text == "-" else f"{text} {unit}"


def overlap_table(rows: Sequence[ScenarioFigures], title: str) -> Table | None:
    """The overlap scenarios' own figures, a measure a line; None when the run played none."""
    rows = [r for r in rows if r.group in OVERLAP_GROUPS]
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column("played")
    table.add_column("measure")
    table.add_column("value [95% CI]", justify="right")
    table.add_column("over", justify="right")
    for r in rows:
        talking = f"{r.overlapped} of {r.turns} turns talking"
        lines: list[tuple[str, str]] = []
        if r.group == "barge-in":
            lines = [
                ("stop latency p50", _unit(_interval(r.stop_p50_ms), "ms")),
                ("stop latency p90", _unit(_interval(r.stop_p90_ms), "ms")),
                ("yielded within 2 s", _unit(_interval(r.yielded, 100.0), "%")),
                ("talk-over, mean", "-" if r.talk_over_s is None else f"{r.talk_over_s:.2f} s"),
                ("answered the interruption", _unit(_interval(r.answered, 100.0), "%")),
            ]
        elif r.group == "backchannel":
            lost = "-" if r.lost_s is None else f"{r.lost_s:.2f} s"
            lines = [
                ("false yields", _unit(_interval(r.false_yield, 100.0), "%")),
                ("lost per false yield, median", lost),
            ]
        elif r.group == "pause":
            talking = f"{r.turns} turns"
            early = "-" if r.early_ms is None else f"{r.early_ms:,.0f} ms"
            lines = [
                ("premature replies", _unit(_interval(r.premature, 100.0), "%")),
                ("how early, median", early),
            ]
        for i, (measure, value) in enumerate(lines):
            table.add_row(r.group if i == 0 else "", measure, value, talking if i == 0 else "")
    return table
