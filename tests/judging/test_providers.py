"""Judge providers over real HTTP on 127.0.0.1: the scripted server's faults and wrappers,
and the request each real provider's SDK sends (checked against a recording server)."""

from __future__ import annotations

import contextlib
import json

import pytest
from aiohttp import web

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import RunError
from voicebench.judging.clients import open_judge
from voicebench.judging.models import Reply
from voicebench.judging.prompt import answer_schema, dialogue_context, verdict_key
from voicebench.judging.run import Matchup, decide
from voicebench.judging.spec import JudgeModelSpec, Rubric
from voicebench.llm import AnthropicChat, OpenAIChat
from voicebench.testing import ScriptedLLMServer

ANSWER = {
    "winner": "A",
    "strength": 2,
    "dimensions": {"H": "A", "E": None, "A": None, "R": "B", "T": None},
    "rationale": "A names the fear directly.",
}
RUBRIC = Rubric(path="rubric.md", text="Judge the replies.", sha256="f" * 64)


def comparison(judge: JudgeModelSpec) -> Matchup:
    d = load_dialogues(BUILTIN_DIALOGUES)[0]
    a = Reply(item_id=d.id, contestant="x", kind="agent", family="fx", heard="Reply one.", text="")
    b = Reply(item_id=d.id, contestant="y", kind="agent", family="fy", heard="Reply two.", text="")
    ctx = dialogue_context(d)
    return Matchup(
        d.id,
        ctx,
        judge,
        a,
        b,
        verdict_key(
            rubric_sha256=RUBRIC.sha256,
            judge=judge.id,
            context=ctx,
            reply_a=a.heard,
            reply_b=b.heard,
            order="AB",
        ),
    )


def compatible(base_url: str, **over) -> JudgeModelSpec:
    return JudgeModelSpec(
        provider="openai-compatible",
        model="scripted-llm",
        family="s",
        base_url=base_url,
        **{"timeout_s": 5.0, **over},
    )


@pytest.fixture(scope="module")
def server():
    with ScriptedLLMServer(ttft_ms=5, token_delay_ms=0, reply=json.dumps(ANSWER)) as s:
        yield s


async def _decide(server, *script, **over):
    for content, fault in script:
        server.enqueue(content, fault=fault)
    judge = compatible(server.base_url, **over)
    client = OpenAIChat(judge, base_url=server.base_url, key=None, response_format=None)
    try:
        return await decide(client, comparison(judge), RUBRIC)
    finally:
        await client.aclose()


async def test_fenced_json_and_trailing_prose_are_read(server):
    v = await _decide(server, (f"```json\n{json.dumps(ANSWER)}\n```", None))
    assert v.answer is not None and v.answer.winner == "A" and v.attempts == 1
    v = await _decide(server, (json.dumps(ANSWER) + "\nI hope this helps.", None))
    assert v.answer.dimensions.R == "B" and v.winner == "x"
    sent = server.history()[-1]
    assert sent["temperature"] == 0 and sent["messages"][0]["role"] == "system"
    assert "Reply A (as heard):\nReply one." in sent["messages"][1]["content"]


async def test_garbage_is_retried_then_stored_as_a_failed_verdict_with_the_raw_text(server):
    v = await _decide(
        server, ("I think A.", None), ("{not json", None), ("Definitely B!", None), parse_retries=2
    )
    assert v.answer is None and v.attempts == 3
    assert v.failure.startswith("unparseable") and v.raw == "Definitely B!"
    v = await _decide(server, ("nope", None), parse_retries=1)  # then the server's good default
    assert v.answer is not None and v.attempts == 2


async def test_rate_limits_server_errors_timeouts_and_broken_streams_are_retried(server):
    v = await _decide(
        server, (None, "429"), (None, "500"), (None, "hang"), (None, "truncate"), timeout_s=1.0
    )
    assert v.answer is not None and v.attempts == 5


async def test_a_judge_that_keeps_failing_is_recorded_never_dropped(server):
    v = await _decide(server, (None, "500"), (None, "500"), max_attempts=2)
    assert v.answer is None and v.failure.startswith("server_error: HTTP 500")
    v = await _decide(server, (None, "empty"), parse_retries=0)
    assert v.answer is None and v.failure == "unparseable: empty answer"


class Recorder:
    """A one-route HTTP server that records the request and plays back a recorded response."""

    def __init__(self, path: str, response: dict, status: int = 200):
        self.path, self.response, self.status, self.requests = path, response, status, []

    async def __aenter__(self):
        async def handle(request: web.Request) -> web.Response:
            self.requests.append({"headers": dict(request.headers), "body": await request.json()})
            return web.json_response(self.response, status=self.status)

        app = web.Application()
        app.router.add_post(self.path, handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()


OPENAI_RESPONSE = {  # the shape of a recorded Chat Completions reply
    "id": "chatcmpl-rec",
    "object": "chat.completion",
    "created": 1763900000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "logprobs": None,
            "message": {"role": "assistant", "content": json.dumps(ANSWER), "refusal": None},
        }
    ],
    "usage": {"prompt_tokens": 412, "completion_tokens": 48, "total_tokens": 460},
}
ANTHROPIC_RESPONSE = {  # the shape of a recorded Messages reply with structured output
    "id": "msg_rec",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": json.dumps(ANSWER)}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 530, "output_tokens": 61},
}


async def test_openai_request_asks_for_strict_json_schema_output(monkeypatch):
    monkeypatch.setenv("VB_TEST_OPENAI_KEY", "sk-test-dummy-123456")
    async with Recorder("/v1/chat/completions", OPENAI_RESPONSE) as rec:
        judge = JudgeModelSpec(
            provider="openai",
            model="gpt-4o-mini",
            family="gpt",
            api_key_env="VB_TEST_OPENAI_KEY",
            base_url=f"{rec.url}/v1",
        )
        async with contextlib.AsyncExitStack() as stack:
            client = await open_judge(judge, stack)
            v = await decide(client, comparison(judge), RUBRIC)
    assert v.answer is not None and v.winner == "x"
    (req,) = rec.requests
    body = req["body"]
    assert req["headers"]["Authorization"] == "Bearer sk-test-dummy-123456"
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == [
        "winner",
        "strength",
        "dimensions",
        "rationale",
    ]
    assert "sk-test" not in v.model_dump_json()


async def test_refused_credentials_stop_the_job_without_echoing_the_key(monkeypatch):
    key = "sk-test-secret-987654"
    echo = {
        "error": {
            "message": f"Incorrect API key provided: {key}.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    async with Recorder("/v1/chat/completions", echo, status=401) as rec:
        judge = JudgeModelSpec(
            provider="openai",
            model="gpt-4o-mini",
            family="gpt",
            api_key_env="VB_TEST_OPENAI_KEY",
            base_url=f"{rec.url}/v1",
        )
        client = OpenAIChat(judge, base_url=f"{rec.url}/v1", key=key, response_format=None)
        with pytest.raises(RunError) as info:
            await decide(client, comparison(judge), RUBRIC)
        await client.aclose()
    assert key not in str(info.value) and "***" in str(info.value)


async def test_anthropic_request_asks_for_json_schema_output(monkeypatch):
    async with Recorder("/v1/messages", ANTHROPIC_RESPONSE) as rec:
        judge = JudgeModelSpec(
            provider="anthropic",
            model="claude-haiku-4-5",
            family="claude",
            api_key_env="VB_TEST_ANTHROPIC_KEY",
            base_url=rec.url,
        )
        client = AnthropicChat(judge, key="sk-ant-dummy-123456", schema=answer_schema())
        try:
            v = await decide(client, comparison(judge), RUBRIC)
        finally:
            await client.aclose()
    assert v.answer is not None and v.answer.dimensions.H == "A"
    (req,) = rec.requests
    body = req["body"]
    headers = {k.lower(): v for k, v in req["headers"].items()}
    assert headers["x-api-key"] == "sk-ant-dummy-123456" and "anthropic-version" in headers
    assert body["system"] == "Judge the replies." and body["model"] == "claude-haiku-4-5"
    assert [m["role"] for m in body["messages"]] == ["user"]
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["properties"]["strength"]["enum"] == [1, 2, 3, 4, 5]
