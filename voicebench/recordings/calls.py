"""Each call as it happened: a dialogue's turns written as one two-channel recording, on the
clock they were timed on.

The caller is on the left: what the agent was sent (each utterance as said, with whatever a
scenario did to it, and a backchannel word where one was said). The agent is on the right, as the
caller heard it: each stretch of its reply audio from the moment it began to play. Both are
16 kHz 16-bit, in ``calls/DIALOGUE.wav`` of the run folder (``DIALOGUE__rK.wav`` for pass K of a
repeated run). The file says so itself, in its comment (a LIST/INFO ``ICMT`` chunk):
``voicebench call: caller=left, agent=right`` (``CALLER_COMMENT``), so a copy of the file alone,
or one FFmpeg converted (it keeps the comment), is read with the right caller by ``recordings
analyze --caller auto`` (``written_caller``).

Each turn's record names its recording and ``call.start_ns``, the clock reading of the
recording's first sample, so every milestone of ``turns.jsonl`` is a sample of it:
``(ns - start_ns) * 16000 // 1e9`` (``CallRef.sample``). Between turns the recording runs on
(the harness setting up the next turn); a call is silent there.

The file is rewritten after every turn, so a killed run keeps the turns it finished. A dialogue
resumed by a later run goes on in the same file after ``GAP_S`` of silence, on the new agent's
clock; its turns' ``start_ns`` say where.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voicebench.agent.interface import HeardTurn
from voicebench.agent.realtime import FIXTURE_RATE, NS_PER_S
from voicebench.fixtures.audio import write_wav
from voicebench.recordings.analyze import Side
from voicebench.runlog import CallRef

RATE = FIXTURE_RATE
LEAD_S = 0.5
"""Silence before a call's first utterance."""
GAP_S = 1.0
"""Silence between the turns written before a resume and those after it."""
CALLS_DIR = "calls"
CALLER_COMMENT = "voicebench call: caller=left, agent=right"
"""The comment of every call recording voicebench writes: the caller's channel and the agent's."""
_CALLER_SAID = re.compile(r"\bvoicebench call: caller=(left|right)\b")


def written_caller(path: Path) -> Side | None:
    """The caller's channel as the recording's tags say it (``CALLER_COMMENT``: a WAV's
    LIST/INFO comment, or the comment FFmpeg carries it over to when it converts the file to
    FLAC or Opus), read through FFmpeg (PyAV); None when they say nothing of it (a recording
    voicebench did not write) or cannot be read."""
    import av

    try:
        with av.open(str(path)) as container:
            tags = [*container.metadata.values()]
            for stream in container.streams.audio:
                tags += stream.metadata.values()
    except (av.FFmpegError, OSError):
        return None
    for text in tags:
        if found := _CALLER_SAID.search(text):
            return "left" if found.group(1) == "left" else "right"
    return None


def call_name(dialogue_id: str, repeat: int = 0) -> str:
    return f"{CALLS_DIR}/{dialogue_id}" + (f"__r{repeat}" if repeat else "") + ".wav"


class CallTape:
    """One call's two channels, written to ``run_dir/name`` after each turn (``add``)."""

    def __init__(
        self, run_dir: Path, name: str, *, fresh: bool = False, deferred: bool = False
    ) -> None:
        """The recording ``name`` of ``run_dir``: what it already holds is gone on to, unless
        ``fresh`` (a call that is redone whole). ``deferred``: written by ``flush`` alone, not
        after each turn (a load's calls, whose event loop must not wait on a disk)."""
        self.path, self.name, self.deferred = run_dir / name, name, deferred
        self.audio = np.zeros((0, 2), dtype=np.int16)
        self.ref: CallRef | None = None
        """Where this stretch of the call is: the clock reading of sample 0 on its clock."""
        if fresh:
            self.path.unlink(missing_ok=True)
        elif self.path.is_file():
            self.audio = _read_stereo(self.path)

    def begin(self) -> None:
        """What comes next is on a new clock (a new agent): it starts a new stretch."""
        self.ref = None

    def add(self, caller: Sequence[tuple[int, np.ndarray]], heard: HeardTurn) -> CallRef | None:
        """Lay one turn on the tape and write it: ``caller``, each utterance with the clock
        reading of its sample 0; what the agent played (``heard``: its reply audio where
        ``placed`` says, and what played before it); the tape runs on to the turn's end. None
        when nothing of the turn was on the clock (a turn that failed before it was said)."""
        said = [(ns, pcm) for ns, pcm in caller if ns > 0 and pcm.size]
        audio, placed = heard.audio, heard.placed
        if not said and not placed:
            return None
        if self.ref is None:
            first = min([ns for ns, _ in said] + [ns for _, ns in placed])
            lead = int((GAP_S if self.audio.shape[0] else LEAD_S) * RATE)
            start_ns = first - (self.audio.shape[0] + lead) * NS_PER_S // RATE
            self.ref = CallRef(path=self.name, start_ns=start_ns)
        at = self.ref.sample
        for ns, pcm in said:
            self._put(0, at(ns), pcm)
        for ns, pcm in heard.before:
            self._put(1, at(ns), pcm)
        bounds = [off for off, _ in placed] + [audio.size]
        for (off, ns), end in zip(placed, bounds[1:], strict=False):
            self._put(1, at(ns), audio[off:end])
        if heard.ended_ns:
            self._put(0, at(heard.ended_ns), np.zeros(0, np.int16))
        if not self.deferred:
            self.flush()
        return self.ref

    def flush(self) -> None:
        """Write the recording (nothing when no turn was laid on it)."""
        if self.audio.shape[0]:
            write_wav(self.path, self.audio, RATE, comment=CALLER_COMMENT)

    def _put(self, channel: int, at: int, pcm: np.ndarray) -> None:
        if at < 0:
            pcm, at = pcm[-at:], 0
        end = at + pcm.size
        if end > self.audio.shape[0]:
            grown = np.zeros((end, 2), dtype=np.int16)
            grown[: self.audio.shape[0]] = self.audio
            self.audio = grown
        self.audio[at:end, channel] = pcm


def _read_stereo(path: Path) -> np.ndarray:
    import soundfile

    data, _ = soundfile.read(str(path), dtype="int16", always_2d=True)
    return np.ascontiguousarray(data[:, :2])
