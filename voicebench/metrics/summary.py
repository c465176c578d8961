"""The per-stage latency summary printed at the end of a run, and failure counts by kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from voicebench import bootstrap
from voicebench.budgets import TTFT_BUDGET_MS
from voicebench.metrics.models import SoundSummary, StallSummary
from voicebench.runlog.models import TurnRecord
from voicebench.timing import REPORTED_STAGES, STAGE_NAMES
from voicebench.timing.stalls import Playback

PERCENTILES = (50, 90, 95)
OPENING_ROW = "opening TTFA"
"""The summary's row of the openings' TTFA, from the call's start."""


@dataclass(frozen=True)
class StageSummary:
    """Percentiles of one quantity over the turns that have it."""

    name: str
    n: int
    p50: float | None
    p90: float | None
    p95: float | None


def _summary(name: str, values: Sequence[float]) -> StageSummary:
    if not values:
        return StageSummary(name, 0, None, None, None)
    p = np.percentile(np.asarray(values, dtype=float), PERCENTILES)
    return StageSummary(name, len(values), float(p[0]), float(p[1]), float(p[2]))


def count_kinds(kinds: Iterable[str]) -> dict[str, int]:
    """How many failures of each kind, the most common first."""
    counts = Counter(kinds)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def kinds_text(counts: dict[str, int]) -> str:
    """``llm_error 2, timeout 1``."""
    return ", ".join(f"{kind} {n}" for kind, n in counts.items())


@dataclass(frozen=True)
class RunSummary:
    turns: int
    failed: int
    failed_by_kind: dict[str, int]
    rows: tuple[StageSummary, ...]
    """One per stage some turn has, in pipeline order (a cascade's run has no speech-to-speech
    model's first audio, a black box no stage at all), then ``TTFT`` and ``TTFA``."""
    ttft_within_budget: float | None
    """Share of timed turns with TTFT <= 500 ms."""
    mean_wer: float | None
    openings: int = 0
    """The agent's openings (``runlog.openings``), its greetings: none when it never spoke
    first. When there are any, ``rows`` ends with ``opening TTFA`` (from the call's start)."""
    openings_failed: int = 0
    stalls: StallSummary | None = None
    """The replies' stalls after their first audio; None when no reply played."""
    sound: SoundSummary | None = None
    """How the replies sound; None when no reply played."""


def mean_interval(
    values: Sequence[float], clusters: Sequence[str]
) -> tuple[float, tuple[float, float] | None]:
    """The mean of per-reply fractions with its 95% interval over resampled dialogues (None
    with too few to tell); all zero, the interval is [0, 0], as every resample is."""
    x = np.asarray(values, dtype=float)
    if bootstrap.count_clusters(clusters) < bootstrap.clusters_needed():
        return float(x.mean()), None
    _, low, high = bootstrap.clustered(x, clusters, [bootstrap.weighted_mean])
    return float(x.mean()), (float(low[0]), float(high[0]))


def played_replies(records: Sequence[TurnRecord]) -> list[tuple[Playback, str]]:
    """Each reply that played something audible, with its dialogue: what every stall figure
    is computed on."""
    return [
        (r.playback, r.dialogue_id)
        for r in records
        if r.playback is not None and r.playback.stalled_share is not None
    ]


def stall_summary(records: Sequence[TurnRecord]) -> StallSummary | None:
    """The stalls of these turns' replies after their first audio, the one place their
    figures are computed (summary, report, gates and load read it); None when none played."""
    played = played_replies(records)
    if not played:
        return None
    dialogues = [d for _, d in played]
    share, interval = mean_interval([p.stalled_share or 0.0 for p, _ in played], dialogues)
    return StallSummary(
        replies=len(played),
        dialogues=bootstrap.count_clusters(dialogues),
        stalled=sum(p.stall_count > 0 for p, _ in played),
        stalls=sum(p.stall_count for p, _ in played),
        longest_ms=round(max(p.longest_stall_ms for p, _ in played), 3),
        stalled_share=round(share, 6),
        stalled_share_ci=interval,
    )


def sound_summary(records: Sequence[TurnRecord]) -> SoundSummary | None:
    """How these turns' replies sound, the one place their figures are computed (summary,
    report and gates read it); None when none played."""
    heard = [(r.sound, r.dialogue_id) for r in records if r.sound is not None]
    if not heard:
        return None
    dialogues = [d for _, d in heard]
    rated = [(s.words_per_minute, d) for s, d in heard if s.words_per_minute is not None]
    wpm, wpm_ci = None, None
    if rated:
        point, lows, highs = bootstrap.clustered(
            [w for w, _ in rated], [d for _, d in rated], [bootstrap.weighted_percentile(50)]
        )
        wpm = round(float(point[0]), 1)
        if bootstrap.count_clusters([d for _, d in rated]) >= bootstrap.clusters_needed(50):
            wpm_ci = (round(float(lows[0]), 1), round(float(highs[0]), 1))
    lufs = [s.loudness_lufs for s, _ in heard if s.loudness_lufs is not None]
    clipped, clipped_ci = mean_interval([s.clipped_share for s, _ in heard], dialogues)
    return SoundSummary(
        replies=len(heard),
        dialogues=bootstrap.count_clusters(dialogues),
        words_per_minute=wpm,
        words_per_minute_ci=wpm_ci,
        rated=len(rated),
        loudness_lufs=round(float(np.median(lufs)), 1) if lufs else None,
        loudness_range_lufs=(min(lufs), max(lufs)) if lufs else None,
        clipped_share=round(clipped, 6),
        clipped_share_ci=clipped_ci,
        clicks=sum(len(s.clicks_ms) for s, _ in heard),
        clicked=sum(bool(s.clicks_ms) for s, _ in heard),
    )


def opening_ttfa(openings: Sequence[TurnRecord]) -> list[float]:
    """The TTFA of every opening that has one: from the call's start to its first sound."""
    return [
        r.timing.ttfa_ms
        for r in openings
        if r.error is None and r.timing is not None and r.timing.ttfa_ms is not None
    ]


def summarize(records: Sequence[TurnRecord], openings: Sequence[TurnRecord] = ()) -> RunSummary:
    """The stages, TTFT and TTFA of the seeker's turns (``records``), and of the agent's
    ``openings`` their TTFA, on a row of its own."""
    timed = [r.timing for r in records if r.timing is not None]
    stages = [
        _summary(
            stage,
            [v for t in timed if t.ttfa_ms is not None and (v := t.stages_ms[stage]) is not None],
        )
        for stage in STAGE_NAMES
    ]
    rows = [s for s in stages if s.n]
    ttft = [t.ttft_ms for t in timed if t.ttft_ms is not None]
    ttfa = [t.ttfa_ms for t in timed if t.ttfa_ms is not None]
    rows += [_summary("TTFT", ttft), _summary("TTFA", ttfa)]
    if openings:
        rows.append(_summary(OPENING_ROW, opening_ttfa(openings)))
    wers = [r.asr_wer for r in records if r.asr_wer is not None]
    return RunSummary(
        turns=len(records),
        failed=sum(r.error is not None for r in records),
        failed_by_kind=count_kinds(r.error.kind for r in records if r.error is not None),
        rows=tuple(rows),
        ttft_within_budget=(sum(v <= TTFT_BUDGET_MS for v in ttft) / len(ttft)) if ttft else None,
        mean_wer=float(np.mean(wers)) if wers else None,
        openings=len(openings),
        openings_failed=sum(r.error is not None for r in openings),
        stalls=stall_summary(records),
        sound=sound_summary(records),
    )


@dataclass(frozen=True)
class ReportedSummary:
    """The turns' TTFA cut as the agent's framework accounts for it (``ReportedLatency``):
    its formula's parts, then what they leave out, and its own end-to-end figure beside the
    TTFA measured on the same turns."""

    framework: str
    rows: tuple[StageSummary, ...]
    """One per part of the formula, then ``unreported``, then ``e2e`` (the framework's own
    end-to-end figure) and ``TTFA``."""


def reported_summary(records: Sequence[TurnRecord]) -> ReportedSummary | None:
    """Percentiles of each part over the answered turns whose framework reported every
    figure of its formula; None when no turn has them."""
    cut = [
        (r, parts)
        for r in records
        if r.reported is not None
        and r.timing is not None
        and r.timing.ttfa_ms is not None
        and (parts := r.reported.accounting(r.timing.ttfa_ms)) is not None
    ]
    if not cut:
        return None
    names = [name for name, _ in REPORTED_STAGES] + ["unreported_ms"]
    rows = [_summary(name.removesuffix("_ms"), [parts[name] for _, parts in cut]) for name in names]
    e2e = [r.reported.e2e_ms for r, _ in cut if r.reported and r.reported.e2e_ms is not None]
    rows.append(_summary("e2e", e2e))
    ttfa = [r.timing.ttfa_ms for r, _ in cut if r.timing and r.timing.ttfa_ms is not None]
    rows.append(_summary("TTFA", ttfa))
    framework = cut[0][0].reported.framework if cut[0][0].reported else ""
    return ReportedSummary(framework, tuple(rows))
