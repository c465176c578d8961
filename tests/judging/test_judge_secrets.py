"""A judging job with a dummy key, against a server that echoes the key in its error messages
(as real providers do), with library logs on: the key is in no file the job, `rate` and
`report` leave behind, and in nothing they print."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from aiohttp import web
from judging_fixtures import ITEMS, make_run
from processes import ROOT

pytestmark = pytest.mark.slow

KEY = "sk-dummy-2b7e4f9a0c1d8e3f5a6b7c8d9e0f1a2b"


def answer(prompt: str) -> dict:
    """Prefers whichever reply alpha gave, then whichever beta did not: a consistent judge."""
    a = prompt.split("Reply A (as heard):\n")[1].split("\n\nReply B")[0].lower()
    b = prompt.split("Reply B (as heard):\n")[1].split("\n\nWhich reply")[0].lower()
    winner = "A" if ("alpha" in a) > ("alpha" in b) or ("beta" in b) > ("beta" in a) else "B"
    return {
        "winner": winner,
        "strength": 2,
        "dimensions": {"H": winner, "E": None, "A": None, "R": None, "T": None},
        "rationale": "It stays with the feeling.",
    }


class EchoingProvider:
    """An OpenAI-compatible server whose first ``failures`` answers are HTTP 500 errors quoting
    the caller's key back, then good verdicts."""

    def __init__(self, failures: int):
        self.failures, self.seen = failures, 0

    async def handle(self, request: web.Request) -> web.Response:
        self.seen += 1
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        prompt = (await request.json())["messages"][-1]["content"]
        if self.seen <= self.failures:
            return web.json_response(
                {
                    "error": {
                        "message": f"Internal error while serving key {key}",
                        "type": "server_error",
                    }
                },
                status=500,
            )
        return web.json_response(
            {
                "id": "chatcmpl-echo",
                "object": "chat.completion",
                "created": 0,
                "model": "echo",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(answer(prompt))},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def __aenter__(self):
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()


async def _voicebench(tmp_path: Path, name: str, *args: str) -> int:
    env = {**os.environ, "VB_TEST_JUDGE_KEY": KEY}
    with (tmp_path / f"{name}.out").open("wb") as out, (tmp_path / f"{name}.err").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "voicebench", *args, cwd=ROOT, env=env, stdout=out, stderr=err
        )
        return await asyncio.wait_for(proc.wait(), 600)


async def test_no_output_of_a_keyed_judging_job_holds_the_key(tmp_path: Path, voice, dialogues):
    runs = [
        make_run(
            tmp_path / "runs",
            name,
            f"fam-{name}",
            {
                ITEMS[0]: f"{name} says: that sounds so hard.",
                ITEMS[1]: f"{name} says: tell me more about it.",
            },
            voice,
            dialogues,
        )
        for name in ("alpha", "beta")
    ]
    async with EchoingProvider(failures=2) as provider:
        (tmp_path / "rubric.md").write_text("Judge which reply is more supportive.\n")
        spec = tmp_path / "judge.toml"
        spec.write_text(
            f'name = "keyed"\nrubric = "rubric.md"\n[[judges]]\n'
            f'provider = "openai-compatible"\nmodel = "echo"\nfamily = "echo"\n'
            f'base_url = "{provider.url}"\napi_key_env = "VB_TEST_JUDGE_KEY"\n'
            f"max_attempts = 2\n"
        )
        out = tmp_path / "judging"
        code = await _voicebench(
            tmp_path,
            "judge",
            "judge",
            *map(str, runs),
            "--judge",
            str(spec),
            "--out",
            str(out),
            "--concurrency",
            "1",
            "--verbose",
        )
        assert code == 0, (tmp_path / "judge.err").read_text()[-3000:]
    assert await _voicebench(tmp_path, "rate", "rate", str(out)) == 0
    assert (
        await _voicebench(tmp_path, "report", "report", str(out), "--out", str(tmp_path / "report"))
        == 0
    )

    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    failed = [v for v in verdicts if v["answer"] is None]
    assert len(failed) == 1 and failed[0]["failure"].startswith("server_error: HTTP 500")
    assert "Internal error while serving key" in failed[0]["failure"]  # the message is kept...
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert len(files) > 15
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f  # ... the key is not
