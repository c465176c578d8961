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

from voicebench._model import FrozenModel
from voicebench.bootstrap import clustered_share, percentiles, wilson
from voicebench.runlog.models import TurnRecord
from voicebench.text import word_errors

Interval = tuple[float, float, float]
"""(point, low, high)."""
OVERLAP_GROUPS = ("barge-in", "backchannel", "pause")
"""The scenarios that overlap the agent's talk (they have a table of their own)."""


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
