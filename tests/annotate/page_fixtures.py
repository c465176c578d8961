"""A judged folder whose replies are real WAV files, one length per contestant (so a test can
tell from the audio alone whose reply the page played), with names that must never reach the
browser."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from synthetic_runs import make_judging, make_run, reply_samples, verdict

from voicebench.annotate import open_rating, serve_rating
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues

CONTESTANTS = ("quokka-agent", "zephyr-agent", "human/reference")


def whose(wav_bytes: int) -> str:
    """The contestant whose reply audio has this many bytes (44-byte header, 16-bit mono)."""
    return next(c for k, c in enumerate(CONTESTANTS) if 44 + 2 * reply_samples(k) == wav_bytes)


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:5]
    runs = [make_run(tmp_path, name, items, 900) for name in CONTESTANTS[:2]]
    verdicts = [verdict(d.id, "quokka-agent", "zephyr-agent", "A") for d in items]
    return make_judging(
        tmp_path / "judged",
        runs,
        items,
        CONTESTANTS,
        verdicts,
        heard_by={c: f"reply {k}: <b>it sounds hard</b>" for k, c in enumerate(CONTESTANTS)},
        audio=True,
    )


@contextlib.asynccontextmanager
async def serving(judged: Path, rater: str, *, per_rater: int, seed: int):
    """The rating page of ``rater`` on a free loopback port while the block runs: (state, the
    URL that opens it with its token)."""
    state, _ = open_rating(judged, rater, per_rater=per_rater, seed=seed)
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_rating(state, port=0, on_ready=ready.set_result, stop=stop))
    try:
        yield state, await asyncio.wait_for(ready, 10)
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.fixture
async def served(judged: Path):
    """The rating page of rater "ann" on a free loopback port: (state, base URL, token)."""
    async with serving(judged, "ann", per_rater=12, seed=7) as (state, url):
        yield state, url.split("/?")[0], state.access_token
