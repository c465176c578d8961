"""The silence window: how short can the turn end be before it answers half a turn?

A turn ends ``user_speech_timeout`` after the VAD stop unless the VAD starts again first. So a
seeker's pause between sentences cuts the turn short when the time from its VAD stop to the
next VAD start is longer than the timeout, and the turn ends (at best) the VAD's stop lag plus
the timeout after the true end of speech. Both depend only on the audio and the VAD, so this
runs pipecat's Silero VAD over every seeker utterance of the fixtures in 20 ms frames, as the
replay feeds it, for a grid of VAD stop and start times, confidence thresholds and volume
floors:

- the timeout is chosen on the dev half of the fixtures (split as the judges' gold set is,
  ``judging.gold.split_of``): the longest stop-to-start gap there plus ``MARGIN_S``;
- on the held-out half it reports the utterances that timeout would cut short and when the
  turn would end after the true end of speech (p50/p90);
- for each VAD stop, the setting chosen is the one whose turn end is earliest on dev. The stop
  itself is not chosen here: the agent's ASR, LLM and TTS start at the VAD stop, so a shorter
  stop is an earlier answer even when the window ends at the same time.

A short ``start_secs`` lets the VAD notice the seeker going on sooner, so the pause that must
be waited out is shorter, and so does a lower ``min_volume`` (pipecat's loudness floor, which
a soft first syllable after a pause can stay under for a few frames); the cost is a VAD that
starts on shorter or softer noises.

``MARGIN_S`` is what the live replay needs on top of the offline gaps: its VAD and its timer
share two busy cores, so a pause can look a few tens of ms longer than it is. With a 50 ms
margin a held-out pause 10 ms under the timeout cut a turn short in a 30-item replay; the
margin is 100 ms.

    python benchmarks/turn_window.py
    python benchmarks/turn_window.py --stops 0.2 --starts 0.03 0.2 --volumes 0.6
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.agentspec import VADSpec  # noqa: E402
from voicebench.fixtures import BUILTIN_FIXTURES  # noqa: E402
from voicebench.fixtures.manifest import read_manifest  # noqa: E402
from voicebench.judging.gold import split_of  # noqa: E402
from voicebench.pipeline.agent import silero_vad  # noqa: E402

SAMPLE_RATE = 16_000
FRAME = SAMPLE_RATE // 50
TRAIL_S = 2.0
MARGIN_S = 0.1


def vad_gaps(
    pcm: np.ndarray, end_s: float, stop: float, start: float, confidence: float, volume: float
) -> tuple[float, float]:
    """The longest VAD stop-to-start gap inside the speech, and the last stop's lag after
    ``end_s`` (the true end of speech)."""
    from pipecat.audio.vad.vad_analyzer import VADState

    # The agent's own VAD, as its pipeline builds it.
    vad = silero_vad(
        VADSpec(stop_secs=stop, start_secs=start, confidence=confidence, min_volume=volume)
    )
    vad.set_sample_rate(SAMPLE_RATE)
    pcm = np.concatenate([pcm, np.zeros(int(TRAIL_S * SAMPLE_RATE), np.int16)])
    state, stops, starts = VADState.QUIET, [], []
    for i in range(0, len(pcm) - FRAME + 1, FRAME):
        now = vad._run_analyzer(pcm[i : i + FRAME].tobytes())
        t = (i + FRAME) / SAMPLE_RATE
        if (
            now is VADState.SPEAKING
            and state is not VADState.SPEAKING
            and state is not VADState.STOPPING
        ):
            starts.append(t)
        elif now is VADState.QUIET and state in (VADState.SPEAKING, VADState.STOPPING):
            stops.append(t)
        state = now
    inner = [s for s in stops if s < end_s]
    gaps = [min(t for t in starts if t > s) - s for s in inner if any(t > s for t in starts)]
    final = [s for s in stops if s >= end_s]
    return max(gaps, default=0.0), (final[0] - end_s) if final else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stops", type=float, nargs="+", default=[0.1, 0.15, 0.2, 0.3])
    ap.add_argument("--starts", type=float, nargs="+", default=[0.03, 0.1, 0.2])
    ap.add_argument("--confidences", type=float, nargs="+", default=[0.7, 0.5])
    ap.add_argument("--volumes", type=float, nargs="+", default=[0.6, 0.3])
    args = ap.parse_args()
    from loguru import logger

    logger.remove()
    utterances = []
    for e in read_manifest(BUILTIN_FIXTURES).entries:
        pcm, _ = sf.read(BUILTIN_FIXTURES / e.path, dtype="int16")
        utterances.append((split_of(e.key), pcm, e.speech_end_sample / SAMPLE_RATE))
    n_dev = sum(u[0] == "dev" for u in utterances)
    print(f"{n_dev} dev and {len(utterances) - n_dev} held-out utterances; margin {MARGIN_S} s")
    print(
        f"{'stop':>5} {'start':>5} {'conf':>4} {'vol':>4} {'timeout':>7} | {'dev end p50':>11} | "
        f"{'held out: cut short':>19} {'longest gap':>11} {'end p50':>7} {'end p90':>7}"
    )
    rows = []
    grid = itertools.product(args.stops, args.starts, args.confidences, args.volumes)
    for stop, start, conf, vol in grid:
        measured = [
            (split, *vad_gaps(pcm, end, stop, start, conf, vol)) for split, pcm, end in utterances
        ]
        dev = [m for m in measured if m[0] == "dev"]
        held = [m for m in measured if m[0] == "holdout"]
        timeout = round(max(g for _, g, _ in dev) + MARGIN_S, 2)
        dev_end = float(np.nanmedian([lag for _, _, lag in dev])) + timeout
        ends = np.array([lag for _, _, lag in held]) + timeout
        cut = sum(g > timeout for _, g, _ in held)
        rows.append((dev_end, stop, start, conf, vol, timeout))
        print(
            f"{stop:>5g} {start:>5g} {conf:>4g} {vol:>4g} {timeout:>7.2f} | {dev_end:>11.3f} | "
            f"{cut:>12}/{len(held):<6} {max(g for _, g, _ in held):>11.3f} "
            f"{np.nanmedian(ends):>7.3f} {np.nanpercentile(ends, 90):>7.3f}",
            flush=True,
        )
    for stop in args.stops:
        _, _, start, conf, vol, timeout = min(r for r in rows if r[1] == stop)
        print(
            f"chosen on dev for vad.stop_secs={stop:g}: vad.start_secs={start:g} "
            f"vad.confidence={conf:g} vad.min_volume={vol:g} turn.user_speech_timeout={timeout:.2f}"
        )


if __name__ == "__main__":
    main()
