"""The report's calls to play: each run's call recordings (``recordings.calls``) copied beside
the page, with where each turn lies in them, so a slow turn is heard where it happened."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from voicebench.reporting.models import CallRecordingView
from voicebench.reporting.replies import AudioFormat, CallCopies, turn_moment
from voicebench.runlog import TurnRecord

CALLS_SHOWN = 12
"""Calls a run shows at most (the first, in the order they were made)."""


def call_recordings(
    runs: Sequence[tuple[str, Path, Sequence[TurnRecord]]],
    out_dir: Path,
    audio_format: AudioFormat = "wav",
) -> tuple[tuple[CallRecordingView, ...], int]:
    """For each ``(agent name, run folder, turns)``, its first ``CALLS_SHOWN`` recorded calls
    with each turn's moments, the recordings copied to ``out_dir``; and how many recorded calls
    were left out."""
    copies = CallCopies(out_dir, audio_format)
    views: list[CallRecordingView] = []
    left_out = 0
    for name, run_dir, records in runs:
        by_call: dict[Path, list[TurnRecord]] = {}
        for r in records:
            source = copies.source(run_dir, r)
            if source is not None:
                by_call.setdefault(source, []).append(r)
        left_out += max(0, len(by_call) - CALLS_SHOWN)
        for source, turns in list(by_call.items())[:CALLS_SHOWN]:
            views.append(
                CallRecordingView(
                    agent_name=name,
                    dialogue_id=turns[0].dialogue_id,
                    audio=copies.audio(source),
                    turns=tuple(turn_moment(t) for t in turns),
                )
            )
    return tuple(views), left_out
