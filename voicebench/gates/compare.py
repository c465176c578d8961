"""``voicebench compare BASE NEW``: what changed between two runs, and which stage moved.

Each figure is computed on both runs' turns and their difference (NEW - BASE) gets a 95%
bootstrap interval, each run's dialogues resampled with their turns, the two runs
independently (``bootstrap.clustered_difference``, 1,000 rounds, seeded):

- TTFT and TTFA at the 50th, 90th and 99th percentile, over the turns that have them;
- every stage's median (the waterfall's stages; none for a remote agent, a black box);
- the ASR word error rate and the failed-turn share;
- the replies' stalls after their first audio (``timing.stalls``): the share of a reply's
  playing time stalled, and its stalled time (means over the replies that played);
- with the interruption scenarios: the stop latency's median and the yield, false-yield and
  premature-reply shares;
- with a judging folder that judged both runs' agents together: the Elo difference, its
  interval over refits on resampled items (the same resamples for both).

Every latency row counts the same turns, all those with the figure, cold ones (the first
after each start, which loads models and opens connections) among them, as the report, the
summary and the gates do: a stage row then says where a TTFT or TTFA row's change came from.
A row's ``base_n`` and ``new_n`` are the turns each run measured it on.

Verdict: a latency is *slower* or *faster* when its interval excludes zero and the change is at
least ``min_change_ms`` (a few milliseconds of a stage that never varies are not news); a share
or rate is *worse* or *better* when its interval excludes zero; otherwise *no clear change*.
A figure either run measured on fewer than ``bootstrap.MIN_TURNS`` turns, or on fewer
dialogues than its interval needs (``bootstrap.clusters_needed``: 6 for a median or a share,
30 for a p90), gets no interval and no verdict: *too few to tell*. The stage whose median
moved most, among those with a verdict, is named first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from voicebench import bootstrap
from voicebench.errors import InputError
from voicebench.gates.changes import Change, ChangeVerdict, Comparison, Measured
from voicebench.gates.figures import read_run
from voicebench.host import contrast
from voicebench.metrics.latency import cold_flags
from voicebench.metrics.summary import played_replies
from voicebench.runlog import TurnRecord
from voicebench.timing import STAGE_NAMES
from voicebench.timing.models import STAGE_LABELS

MIN_CHANGE_MS = 10.0


def _row(
    key: str,
    label: str,
    unit: str,
    kind: Literal["latency", "stage", "share"],
    base: Measured,
    new: Measured,
    q: float | None,
    *,
    min_change: float,
    scale: float = 1.0,
    higher_is: Literal["worse", "better"] = "worse",
    seed: int = 0,
) -> Change:
    """One figure's change: the ``q`` percentile of the values (None: their mean)."""
    stat = bootstrap.weighted_mean if q is None else bootstrap.weighted_percentile(q)

    def point(measured: Measured) -> float | None:
        x = np.asarray([v for v, _ in measured], dtype=float)
        return round(float(stat(x, np.ones((1, x.size)))[0]) * scale, 2) if x.size else None

    row = dict(
        key=key,
        label=label,
        unit=unit,
        kind=kind,
        higher_is=higher_is,
        base_n=len(base),
        new_n=len(new),
    )
    a, b = point(base), point(new)
    if a is None or b is None:
        return Change(
            **row, base=a, new=b, change=None, low=None, high=None, verdict="not measured"
        )
    needed = bootstrap.clusters_needed(50.0 if q is None else q)
    if any(
        len(m) < bootstrap.MIN_TURNS or bootstrap.count_clusters([d for _, d in m]) < needed
        for m in (base, new)
    ):
        change = round(b - a, 2)
        return Change(
            **row, base=a, new=b, change=change, low=None, high=None, verdict="too few to tell"
        )
    change, low, high = (
        x * scale
        for x in bootstrap.clustered_difference(
            [v for v, _ in base],
            [d for _, d in base],
            [v for v, _ in new],
            [d for _, d in new],
            stat,
            seed=seed,
        )
    )
    clear = (low > 0 or high < 0) and abs(change) >= min_change
    if not clear:
        verdict: ChangeVerdict = "no clear change"
    elif kind == "share":
        verdict = "worse" if (change > 0) == (higher_is == "worse") else "better"
    else:
        verdict = "slower" if change > 0 else "faster"
    return Change(
        **row,
        base=a,
        new=b,
        change=round(change, 2),
        low=round(low, 2),
        high=round(high, 2),
        verdict=verdict,
    )


def _timing(records: Sequence[TurnRecord], field: str) -> Measured:
    return [
        (v, r.dialogue_id)
        for r in records
        if r.error is None and r.timing is not None and (v := getattr(r.timing, field)) is not None
    ]


def _stage(records: Sequence[TurnRecord], stage: str) -> Measured:
    return [
        (v, r.dialogue_id)
        for r in records
        if r.error is None and r.timing is not None and (v := r.timing.stages_ms[stage]) is not None
    ]


def _outcome(records: Sequence[TurnRecord], name: str, field: str) -> Measured:
    out = []
    for r in records:
        s = r.scenario
        if s is None or s.name != name:
            continue
        if name != "pause" and not s.agent_speaking:
            continue
        v = getattr(s, field)
        if v is not None:
            out.append((float(v), r.dialogue_id))
    return out


def elo_change(judging_dir: Path, base: str, new: str) -> Change:
    """The Elo difference of two contestants judged together, with its bootstrap interval."""
    from voicebench.rating import elo_difference

    if base == new:
        raise InputError(
            f"both runs are contestant {base!r}: judge them as two contestants to compare "
            "their Elo",
            field="--judging",
        )
    change, low, high = elo_difference(judging_dir, base, new)
    clear = low > 0 or high < 0
    return Change(
        key="elo",
        label="HEART Elo",
        unit="Elo",
        kind="share",
        base=None,
        new=None,
        change=round(change, 1),
        low=round(low, 1),
        high=round(high, 1),
        verdict=("better" if change > 0 else "worse") if clear else "no clear change",
        higher_is="better",
    )


def compare_runs(
    base_dir: Path,
    new_dir: Path,
    *,
    min_change_ms: float = MIN_CHANGE_MS,
    judging: Path | None = None,
) -> Comparison:
    """Compare two runs; with ``judging``, a judging folder holding both, their Elo too."""
    (bh, base), (nh, new) = read_run(base_dir), read_run(new_dir)
    mean, median = None, 50.0  # the statistics: a mean, the 50th percentile
    rows: list[Change] = []
    for name, label in (("ttft_ms", "TTFT"), ("ttfa_ms", "TTFA")):
        for q in (50, 90, 99):
            rows.append(
                _row(
                    f"{name[:-3]}_p{q}_ms",
                    f"{label} p{q}",
                    "ms",
                    "latency",
                    _timing(base, name),
                    _timing(new, name),
                    q,
                    min_change=min_change_ms,
                )
            )
    for stage in STAGE_NAMES:
        b, n = _stage(base, stage), _stage(new, stage)
        if b or n:
            rows.append(
                _row(
                    f"stage_{stage}_p50_ms",
                    f"{STAGE_LABELS[stage]} (median)",
                    "ms",
                    "stage",
                    b,
                    n,
                    median,
                    min_change=min_change_ms,
                )
            )
    rows += [
        _row(
            "wer_pct",
            "ASR word error rate",
            "%",
            "share",
            [(r.asr_wer, r.dialogue_id) for r in base if r.asr_wer is not None],
            [(r.asr_wer, r.dialogue_id) for r in new if r.asr_wer is not None],
            mean,
            min_change=0.0,
            scale=100.0,
        ),
        _row(
            "failed_pct",
            "failed turns",
            "%",
            "share",
            [(float(r.error is not None), r.dialogue_id) for r in base],
            [(float(r.error is not None), r.dialogue_id) for r in new],
            mean,
            min_change=0.0,
            scale=100.0,
        ),
    ]
    played_b, played_n = played_replies(base), played_replies(new)
    if played_b or played_n:  # the replies' stalls after their first audio
        rows += [
            _row(
                "stalled_pct",
                "stalled share of a reply",
                "%",
                "share",
                [(p.stalled_share or 0.0, d) for p, d in played_b],
                [(p.stalled_share or 0.0, d) for p, d in played_n],
                mean,
                min_change=0.0,
                scale=100.0,
            ),
            _row(
                "stalled_ms",
                "stalled time of a reply (mean)",
                "ms",
                "latency",
                [(p.stalled_ms, d) for p, d in played_b],
                [(p.stalled_ms, d) for p, d in played_n],
                mean,
                min_change=min_change_ms,
            ),
        ]
    for scenario, field, key, label, unit, stat, higher in (
        (
            "barge-in",
            "stop_ms",
            "stop_latency_p50_ms",
            "barge-in stop latency (median)",
            "ms",
            median,
            "worse",
        ),
        ("barge-in", "yielded", "yielded_pct", "barge-in: yielded", "%", mean, "better"),
        (
            "backchannel",
            "false_yield",
            "false_yield_pct",
            "backchannel: false yields",
            "%",
            mean,
            "worse",
        ),
        ("pause", "premature", "premature_pct", "pause: premature replies", "%", mean, "worse"),
    ):
        b, n = _outcome(base, scenario, field), _outcome(new, scenario, field)
        if b or n:
            share = unit == "%"
            rows.append(
                _row(
                    key,
                    label,
                    unit,
                    "share" if share else "latency",
                    b,
                    n,
                    stat,
                    min_change=0.0 if share else min_change_ms,
                    scale=100.0 if share else 1.0,
                    higher_is=higher,  # type: ignore[arg-type]
                )
            )
    if judging is not None:
        rows.append(elo_change(judging, bh.agent.name, nh.agent.name))
    return Comparison(
        base_dir=str(base_dir),
        new_dir=str(new_dir),
        base_name=bh.agent.name if bh.run_id == bh.agent.name else f"{bh.agent.name} ({bh.run_id})",
        new_name=nh.agent.name if nh.run_id == nh.agent.name else f"{nh.agent.name} ({nh.run_id})",
        base_turns=len(base),
        new_turns=len(new),
        base_cold_turns=sum(cold_flags(base)),
        new_cold_turns=sum(cold_flags(new)),
        min_change_ms=min_change_ms,
        headline=_headline(rows),
        changes=tuple(_most_moved_first(rows)),
        hosts=contrast(bh.hosts, nh.hosts),
    )


def _moved(rows: Sequence[Change]) -> Change | None:
    stages = [c for c in rows if c.kind == "stage" and c.verdict in ("slower", "faster")]
    if not stages:
        stages = [c for c in rows if c.key == "ttfa_p50_ms" and c.verdict in ("slower", "faster")]
    return max(stages, key=lambda c: abs(c.change or 0.0), default=None)


def _headline(rows: Sequence[Change]) -> str:
    c = _moved(rows)
    ttfa = next((r for r in rows if r.key == "ttfa_p50_ms"), None)
    if c is None and ttfa is not None and ttfa.verdict == "too few to tell":
        return (
            f"too few turns to tell (n={ttfa.base_n} and {ttfa.new_n} with a TTFA): a verdict "
            f"needs {bootstrap.MIN_TURNS} turns in {bootstrap.clusters_needed()} dialogues a side"
        )
    if c is None:
        return "no stage moved clearly"
    what = c.label.removesuffix(" (median)")
    return (
        f"{what} got {c.verdict}: {c.change:+,.1f} ms (95% CI {c.low:+,.1f} to {c.high:+,.1f}), "
        f"median {c.base:,.1f} -> {c.new:,.1f} ms"
    )


def _most_moved_first(rows: list[Change]) -> list[Change]:
    c = _moved(rows)
    return rows if c is None else [c, *(r for r in rows if r is not c)]
