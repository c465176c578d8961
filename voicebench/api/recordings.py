"""Call recordings from Python: two-channel recordings of calls timed turn by turn and written
as a run folder (``analyze_recordings``), or cut into dialogue items to replay
(``import_recordings``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench._jsonl import read_models
from voicebench.api.results import PathLike, Run
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError
from voicebench.pipeline.stt import Transcriber
from voicebench.recordings.analyze import MIN_GAP_S
from voicebench.recordings.folder import CALLER_SIDES, CALLS_FILE, RecordedCall
from voicebench.recordings.folder import analyze_recordings as write_folder
from voicebench.recordings.importing import import_recordings as import_to_folder
from voicebench.recordings.speech import TALK_GAP_S
from voicebench.runlog import default_run_dir

MIN_GAP_MS = MIN_GAP_S * 1000
"""The shortest silence inside an agent's reply that is a gap, in ms (``MIN_GAP_S``)."""


def _paths(recordings: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(recordings, (str, os.PathLike)):
        return [Path(recordings)]
    return [Path(p) for p in recordings]


def analyze_recordings(
    recordings: PathLike | Sequence[PathLike],
    *,
    out: PathLike | None = None,
    caller: str = "left",
    name: str = "recorded",
    gap_ms: float = MIN_GAP_MS,
    progress: Callable[[int, int, Path], None] | None = None,
) -> Run:
    """Time recorded calls that voicebench did not make, from their audio alone.

    Args:
        recordings: two-channel WAV (PCM or 8 kHz mu-law), FLAC or Opus files at 8-48 kHz, or
            folders of them.
        out: the run folder to write (default ``reports/runs/recorded-TIMESTAMP``). A folder
            this call was writing when it was killed is finished: the recordings already
            written are kept. One holding any other run is refused.
        caller: which channel is the caller's, ``"left"`` or ``"right"``, or ``"auto"``: as
            the recording says where voicebench wrote it (``recordings.calls.written_caller``),
            else guessed (``recordings.analyze.guess_caller``; ``calls.jsonl`` says which, and
            why a guess).
        name: the agent's name in the folder and its reports.
        gap_ms: the shortest silence inside the agent's reply that is a gap (under 500 ms: a
            silence that long ends its talk).
        progress: called after each recording with (done, total, file).

    Returns:
        The run: a turn per caller utterance, its TTFA the response latency read off the
        recording (edges found by Silero VAD in 32 ms frames, then moved to the sample on a
        clean line, to a 10 ms grid in noise); a turn never
        answered is failed (``no_answer``); a barge-in plays the ``barge-in`` scenario with the
        agent's stop time; each call's recording is in ``calls/`` and every turn as read off
        it (talk-over, dead air, the gaps inside each reply) in ``calls.jsonl``. ``check``,
        ``compare`` and ``report`` read it as a replay. A gap is a silence on the agent's
        channel, not a stall: a recording cannot tell audio that arrived late from a pause the
        agent meant.
    """
    if caller not in CALLER_SIDES:
        raise InputError(f"must be {', '.join(CALLER_SIDES)}", field="caller")
    if not 0 < gap_ms < TALK_GAP_S * 1000:
        raise InputError(
            f"must be over 0 and under {TALK_GAP_S * 1000:.0f} ms (a silence that long ends "
            "the agent's talk)",
            field="gap_ms",
        )
    target = Path(out) if out is not None else default_run_dir(name, prefix="recorded-")
    write_folder(
        _paths(recordings),
        target,
        caller=caller,
        name=name,
        transcribe=Transcriber(),
        gap_s=gap_ms / 1000,
        progress=progress,
    )
    return Run.load(target)


def recorded_calls(folder: PathLike) -> list[RecordedCall]:
    """The calls of a folder ``analyze_recordings`` wrote, each with its caller's channel (and
    why, when guessed) and every turn as read off it: response latency, barge-ins and the
    agent's stop, talk-over, dead air, the gaps inside each reply."""
    path = Path(folder)
    if not (path / CALLS_FILE).is_file():
        raise InputError("not a folder of analyzed recordings (no calls.jsonl)", file=path)
    return read_models(path / CALLS_FILE, RecordedCall)


def import_recordings(
    recordings: PathLike | Sequence[PathLike],
    *,
    out: PathLike,
    caller: str = "left",
    progress: Callable[[int, int, Path], None] | None = None,
) -> list[Dialogue]:
    """A real call becomes a test: each recording's caller turns cut into a dialogue item and
    audio fixtures, to replay the same caller against another agent.

    Args:
        recordings: two-channel recordings (as ``analyze_recordings`` reads them), or folders.
        out: the folder to write: ``items.jsonl`` (an item per recording: the caller's words
            as seeker turns, the agent's as supporter turns, its last reply the reference the
            replay's replies are judged against) and ``fixtures/`` (each caller utterance cut
            from the recording, its end of speech as the recording has it). Items there from
            other recordings are kept.
        caller: ``"left"``, ``"right"`` or ``"auto"``, as for ``analyze_recordings``.
        progress: called after each recording with (done, total, file).

    Returns:
        The items made; replay them with ``replay(agent, OUT/items.jsonl,
        fixtures=OUT/fixtures)``.
    """
    return import_to_folder(
        _paths(recordings),
        Path(out),
        caller=caller,
        transcribe=Transcriber(),
        progress=progress,
    )
