"""A judged folder whose replies are real WAV files, one length per contestant (so a test can
tell from the audio alone whose reply the page played), with names that must never reach the
browser."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import make_judging, make_run, verdict

from voicebench.annotate import open_rating, serve_rating
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures.audio import write_wav
from voicebench.judging import Reply

CONTESTANTS = ("quokka-agent", "zephyr-agent", "human/reference")
SECONDS = {"quokka-agent": 0.6, "zephyr-agent": 0.9, "human/reference": 1.2}
RATE = 16_000


def tone(seconds: float, hz: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:5]
    runs = [make_run(tmp_path, name, items, 900) for name in CONTESTANTS[:2]]
    verdicts = [verdict(d.id, "quokka-agent", "zephyr-agent", "A") for d in items]
    out = make_judging(tmp_path / "judged", runs, items, CONTESTANTS, verdicts)
    replies = []
    for d in items:
        for k, name in enumerate(CONTESTANTS):
            wav = tmp_path / "audio" / f"{k}-{d.id}.wav"
            write_wav(wav, tone(SECONDS[name], 300 + 100 * k), RATE)
            replies.append(
                Reply(
                    item_id=d.id,
                    contestant=name,
                    kind="human" if name.startswith("human") else "agent",
                    family="f",
                    heard=f"reply {k} to {d.id}: <b>it sounds hard</b>",
                    text="x",
                    audio_path=str(wav),
                )
            )
    (out / "replies.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in replies))
    return out


@pytest.fixture
async def served(judged: Path):
    """The rating page of rater "ann" on a free loopback port: (state, base URL, token)."""
    state, _ = open_rating(judged, "ann", per_rater=12, seed=7)
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_rating(state, port=0, on_ready=ready.set_result, stop=stop))
    url = await asyncio.wait_for(ready, 10)
    yield state, url.split("/?")[0], state.access_token
    stop.set()
    with contextlib.suppress(asyncio.CancelledError):
        await task
