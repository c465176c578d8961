"""How often the turn rule's cue reads a transcript as stopping mid-sentence, and where it errs.

``[turn] unfinished_timeout`` keeps a turn open longer when the words so far stop
mid-sentence (``voicebench.text.unfinished``). Whisper tiny.en, as the shipped agents run it,
transcribes every seeker utterance of the fixtures three ways, each with the 0.5 s of
trailing silence pipecat's segmented ASR appends:

- **cut mid-sentence**, where the pause scenario pauses (``insert_pause``): read as
  unfinished, the turn waits the pause out (the share caught);
- **cut after a sentence**, at each gap between sentences: read as unfinished, the turn
  waits longer than it needs while the caller goes on anyway (harmless);
- **whole**: read as unfinished, a finished turn waits ``unfinished_timeout`` instead of the
  ordinary window (the cost in latency).

    .venv/bin/python benchmarks/unfinished.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.agentspec import STTSpec  # noqa: E402
from voicebench.fixtures import BUILTIN_FIXTURES  # noqa: E402
from voicebench.fixtures.manifest import read_manifest  # noqa: E402
from voicebench.pipeline import stt  # noqa: E402
from voicebench.scenarios.overlap import insert_pause, sentence_gaps  # noqa: E402
from voicebench.text import unfinished  # noqa: E402

TRAILING = np.zeros(stt.SAMPLE_RATE // 2, np.int16)


def gap_starts(pcm: np.ndarray, first: int, last: int) -> list[int]:
    """Where each silence between sentences begins, inside the speech."""
    gaps = sentence_gaps(pcm, margin=0)
    starts = np.flatnonzero(np.diff(gaps.astype(np.int8)) == 1) + 1
    return [int(s) for s in starts if first < s < last]


def main() -> None:
    model = stt.load_whisper(STTSpec())
    counts = {"cut mid-sentence": [0, 0], "cut after a sentence": [0, 0], "whole": [0, 0]}
    examples: dict[str, list[str]] = {k: [] for k in counts}

    def read(kind: str, pcm: np.ndarray) -> None:
        text = stt.transcribe_pcm(model, np.concatenate([pcm, TRAILING])).strip()
        if not text:
            return
        counts[kind][1] += 1
        if unfinished(text):
            counts[kind][0] += 1
            examples[kind].append(text[-50:])

    for e in read_manifest(BUILTIN_FIXTURES).entries:
        pcm, _ = sf.read(BUILTIN_FIXTURES / e.path, dtype="int16")
        first, last = e.speech_start_sample, e.speech_end_sample
        _, at = insert_pause(pcm, 800.0)
        read("cut mid-sentence", pcm[first:at])
        for start in gap_starts(pcm, first, last):
            read("cut after a sentence", pcm[first:start])
        read("whole", pcm[first:last])
    print(f"{len(read_manifest(BUILTIN_FIXTURES).entries)} fixture utterances, Whisper tiny.en")
    print(f"{'transcript':22} {'read unfinished':>16} {'of':>4} {'share':>6}")
    for kind, (n_unfinished, n) in counts.items():
        print(f"{kind:22} {n_unfinished:>16} {n:>4} {n_unfinished / max(1, n):>6.0%}")
    for kind in ("whole", "cut after a sentence"):
        for text in examples[kind][:5]:
            print(f"  {kind}, read unfinished: ...{text}")


if __name__ == "__main__":
    main()
