"""Scripted speech endpoints with known delays: the OpenAI-compatible transcription and speech
API of ``voicebench.pipeline.speech_api``, answering with a fixed transcript ``stt_ms`` after a
request arrives and with a tone (``WORD_S`` a word) whose first audio leaves ``tts_ms`` after
one does. A measuring instrument for tests, not a model.

Its speech takes the scripted voice agent's stall plan (``voicebench.testing.scripted_plan``):
``lead_ms`` sent ahead of where the caller is to play it (all of it at once when not given),
then in real time, with ``holds``
(after ``a`` ms of audio, nothing for ``h`` ms) or at a ``pace`` below real time; ``pause_ms``
of silence in the middle of the tone is a pause it means, sent as audio. With ``--log``, one
JSON line per answer says where each stretch of what it sent must play, by when each 20 ms
chunk left (``placed``, ``rate``, ``reply_samples``: what ``sent_playback`` reads).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np

from voicebench.pipeline.speech_api import OUT_RATE, SpeechServer, serve
from voicebench.testing.scripted_plan import send_time_ns

WORD_S = 0.12
CHUNK_MS = 20
NS_PER_S = 1_000_000_000
ALL_AHEAD_NS = 10**15


class ScriptedModels:
    def __init__(
        self,
        *,
        transcript: str,
        stt_ms: float,
        tts_ms: float,
        holds: tuple[tuple[float, float], ...] = (),
        pace: float = 1.0,
        lead_ms: float | None = None,
        pause_ms: float = 0.0,
        log: Path | None = None,
    ) -> None:
        if not 0 < pace <= 1 or (holds and pace != 1):
            raise ValueError("pace is a fraction of real time in (0, 1], without holds below 1")
        self.transcript, self.stt_ms, self.tts_ms = transcript, stt_ms, tts_ms
        self.holds = tuple((int(a * 1e6), int(h * 1e6)) for a, h in sorted(holds))
        # no lead given: the whole answer goes as soon as it is made, as a file would
        self.lead_ns = ALL_AHEAD_NS if lead_ms is None else int(lead_ms * 1e6)
        self.pace, self.pause_ms = pace, pause_ms
        self.log = log

    async def transcribe(self, pcm: np.ndarray) -> str:
        await asyncio.sleep(self.stt_ms / 1000)
        return self.transcript

    def tone(self, text: str) -> np.ndarray:
        """The answer to ``text``: a 220 Hz tone ``WORD_S`` a word, ``pause_ms`` of silence in
        its middle."""
        words = max(1, len(text.split()))
        t = np.arange(int(words * WORD_S * OUT_RATE)) / OUT_RATE
        tone = (0.3 * 32767 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)
        if not self.pause_ms:
            return tone
        half = tone.size // 2
        pause = np.zeros(int(self.pause_ms * OUT_RATE / 1000), dtype=np.int16)
        return np.concatenate([tone[:half], pause, tone[half:]])

    async def speak(self, text: str) -> AsyncIterator[np.ndarray]:
        asked = time.perf_counter_ns()
        audio = self.tone(text)
        start = asked + int(self.tts_ms * 1e6)
        step = OUT_RATE * CHUNK_MS // 1000
        play_end = 0
        placed: list[tuple[int, int]] = []  # (sample, ns) where each unbroken stretch plays
        for k, pos in enumerate(range(0, audio.size, step)):
            reply_ns = k * CHUNK_MS * 1_000_000
            deadline = start + send_time_ns(reply_ns, self.holds, self.pace, self.lead_ns)
            await asyncio.sleep(max(0, deadline - time.perf_counter_ns()) / NS_PER_S)
            chunk = audio[pos : pos + step]
            sent = time.perf_counter_ns()
            yield chunk  # written to the response before the next chunk is asked for
            plays = max(sent, play_end)
            if plays != play_end:
                placed.append((pos, plays))
            play_end = plays + chunk.size * NS_PER_S // OUT_RATE
        if self.log is not None:
            entry = {"placed": placed, "rate": OUT_RATE, "reply_samples": int(audio.size)}
            with self.log.open("a") as out:
                out.write(json.dumps(entry) + "\n")


class ScriptedSpeechServer(SpeechServer):
    """``with ScriptedSpeechServer(stt_ms=100, tts_ms=150) as s: s.base_url``; with a stall
    plan, ``s.answers()`` is what it logged of each answer it spoke."""

    what = "scripted speech server"
    module = "voicebench.testing.scripted_speech"

    def __init__(
        self,
        *,
        transcript: str = "I have been feeling low lately.",
        stt_ms: float = 100,
        tts_ms: float = 150,
        holds: tuple[tuple[float, float], ...] = (),
        pace: float = 1.0,
        lead_ms: float | None = None,
        pause_ms: float = 0.0,
    ) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="voicebench-speech-")
        self.log_path = Path(self._folder.name) / "answers.jsonl"
        plan = [f"--hold={a}:{h}" for a, h in holds]
        plan += [] if lead_ms is None else [f"--lead-ms={lead_ms}"]
        super().__init__(
            args=(
                *("--transcript", transcript, "--stt-ms", str(stt_ms), "--tts-ms", str(tts_ms)),
                *plan,
                *(f"--pace={pace}", f"--pause-ms={pause_ms}"),
                *("--log", str(self.log_path)),
            )
        )

    def answers(self) -> list[dict]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]


def _hold(text: str) -> tuple[float, float]:
    at, _, ms = text.partition(":")
    return float(at), float(ms)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m voicebench.testing.scripted_speech")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stt-model", default=None, help="(ignored)")
    parser.add_argument("--transcript", default="I have been feeling low lately.")
    parser.add_argument("--stt-ms", type=float, default=100.0)
    parser.add_argument("--tts-ms", type=float, default=150.0)
    parser.add_argument("--hold", type=_hold, action="append", default=[], help="AT_MS:FOR_MS")
    parser.add_argument("--pace", type=float, default=1.0)
    parser.add_argument("--lead-ms", type=float, default=None)
    parser.add_argument("--pause-ms", type=float, default=0.0)
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    models = ScriptedModels(
        transcript=args.transcript,
        stt_ms=args.stt_ms,
        tts_ms=args.tts_ms,
        holds=tuple(args.hold),
        pace=args.pace,
        lead_ms=args.lead_ms,
        pause_ms=args.pause_ms,
        log=args.log,
    )
    asyncio.run(serve(models, port=args.port))


if __name__ == "__main__":
    main()
