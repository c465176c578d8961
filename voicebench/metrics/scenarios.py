"""Each scenario's figures over a run's turns, with 95% intervals: the table printed after a run
played with ``--scenario``.

Turns are grouped by what they played: ``clean`` (no scenario), ``noise pink 10 dB``,
``phone-line``, ``barge-in``... TTFA's median has a bootstrap interval; the ASR word error
rate is all errors over all reference words.

The overlap scenarios (``voicebench.scenarios.overlap``) get a table of their own, over the
turns where what they test happened (the agent was talking when the seeker barged in or said
the word): the stop latency's median and 90th percentile, and yields, false yields and
premature replies as shares of those turns.

Every interval resamples dialogues, a dialogue's turns in the group kept together, as the
run's own figures do (``metrics.latency``); a figure on fewer dialogues than its interval needs
(``bootstrap.clusters_needed``: 6 for a median or a share, 30 for a p90) has its value and no
interval (``Interval``'s ends None): too few to tell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from voicebench import bootstrap
from voicebench._model import FrozenModel
from voicebench.runlog.models import TurnRecord
from voicebench.text import word_errors

Interval = tuple[float, float | None, float | None]
"""(point, low, high); the ends None when there are too few dialogues to tell."""
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


def percentile_interval(values: Sequence[float], dialogues: Sequence[str], q: float) -> Interval:
    """The ``q`` percentile of ``values`` with its interval over resampled dialogues."""
    point = float(np.percentile(values, q))
    if bootstrap.count_clusters(dialogues) < bootstrap.clusters_needed(q):
        return point, None, None
    _, (low,), (high,) = bootstrap.clustered(values, dialogues, [bootstrap.weighted_percentile(q)])
    return point, float(low), float(high)


def share_interval(hits: Sequence[float], dialogues: Sequence[str]) -> Interval | None:
    """The share of turns (0/1 each) with its interval over resampled dialogues
    (``bootstrap.clustered_share``)."""
    return bootstrap.clustered_share(hits, dialogues) if hits else None


def _overlap(records: Sequence[TurnRecord]) -> dict:
    played = [(r.scenario, r.dialogue_id) for r in records if r.scenario is not None]
    hit = [(o, d) for o, d in played if o.agent_speaking]

    def share(field: str, among) -> Interval | None:
        known = [(getattr(o, field), d) for o, d in among if getattr(o, field) is not None]
        return share_interval([float(bool(v)) for v, _ in known], [d for _, d in known])

    def median(field: str, among) -> float | None:
        values = [v for o, _ in among if (v := getattr(o, field)) is not None]
        return float(np.median(values)) if values else None

    out: dict = {"overlapped": len(hit)}
    stops = [(o.stop_ms, d) for o, d in hit if o.stop_ms is not None]
    if stops:
        values, dialogues = [v for v, _ in stops], [d for _, d in stops]
        out["stop_p50_ms"] = percentile_interval(values, dialogues, 50)
        out["stop_p90_ms"] = percentile_interval(values, dialogues, 90)
        out["talk_over_s"] = float(np.mean([o.talk_over_s or 0.0 for o, _ in hit]))
    out["yielded"] = share("yielded", hit)
    out["answered"] = share("answered", hit)
    out["false_yield"] = share("false_yield", hit)
    out["lost_s"] = median("lost_s", hit)
    out["premature"] = share("premature", played)
    out["early_ms"] = median("early_ms", played)
    return out


def scenario_figures(records: Sequence[TurnRecord]) -> list[ScenarioFigures]:
    """One row per group of turns, clean first, then by name."""
    groups: dict[str, list[TurnRecord]] = defaultdict(list)
    for r in records:
        groups[group_of(r)].append(r)
    rows = []
    for name in sorted(groups, key=lambda g: (g != "clean", g)):
        turns = groups[name]
        timed = [
            (t.ttfa_ms, r.dialogue_id)
            for r in turns
            if (t := r.timing) is not None and t.ttfa_ms is not None
        ]
        p50 = None
        if timed:
            p50 = percentile_interval([v for v, _ in timed], [d for _, d in timed], 50)
        rows.append(
            ScenarioFigures(
                group=name,
                turns=len(turns),
                failed=sum(r.error is not None for r in turns),
                ttfa_p50_ms=p50,
                wer=_wer(turns),
                **_noise(turns),
                measured=_measured(turns),
                **_overlap(turns),
            )
        )
    return rows


def _wer(turns: Sequence[TurnRecord]) -> Interval | None:
    """All word errors over all reference words, with each dialogue's turns resampled
    together."""
    errors: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in turns:
        if r.user_transcript:
            e, n = word_errors(r.user_text, r.user_transcript)
            if n:
                errors[r.dialogue_id][0] += e
                errors[r.dialogue_id][1] += n
    if not errors:
        return None
    e, n = np.array(list(errors.values()), dtype=float).T
    if len(errors) < bootstrap.clusters_needed():
        return float(e.sum() / n.sum()), None, None
    return bootstrap.cluster_ratio(e, n)
