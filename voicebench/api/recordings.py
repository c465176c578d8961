"""``analyze_recordings`` from Python: two-channel recordings of calls timed turn by turn and
written as a run folder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench.api.results import PathLike, Run
from voicebench.errors import InputError
from voicebench.pipeline.stt import Transcriber
from voicebench.recordings.folder import analyze_recordings as write_folder
from voicebench.runlog import default_run_dir

SIDES = ("left", "right")


def analyze_recordings(
    recordings: Sequence[PathLike],
    *,
    out: PathLike | None = None,
    caller: str = "left",
    name: str = "recorded",
    progress: Callable[[int, int, Path], None] | None = None,
) -> Run:
    """Time recorded calls that voicebench did not make, from their audio alone.

    Args:
        recordings: two-channel WAV (PCM or 8 kHz mu-law), FLAC or Opus files at 8-48 kHz, or
            folders of them.
        out: the run folder to write (default ``reports/runs/recorded-TIMESTAMP``); it must
            not hold a run already.
        caller: which channel is the caller's, ``"left"`` or ``"right"``.
        name: the agent's name in the folder and its reports.
        progress: called after each recording with (done, total, file).

    Returns:
        The run: a turn per caller utterance, its TTFA the response latency read off the
        recording (on a 10 ms grid, edges found by Silero VAD in 32 ms frames); a turn never
        answered is failed (``no_answer``); a barge-in plays the ``barge-in`` scenario with the
        agent's stop time. ``check``, ``compare`` and ``report`` read it as a replay.
    """
    if caller not in SIDES:
        raise InputError("must be left or right", field="caller")
    target = Path(out) if out is not None else default_run_dir(name, prefix="recorded-")
    write_folder(
        [Path(p) for p in recordings],
        target,
        caller="left" if caller == "left" else "right",
        name=name,
        transcribe=Transcriber(),
        progress=progress,
    )
    return Run.load(target)
