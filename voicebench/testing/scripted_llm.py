"""A scripted OpenAI-compatible chat-completions server with a known time to first token.

Tests and timing benchmarks point a real OpenAI client (or a real pipecat LLM service) at it
and compare the time to first token they measure with the one injected here. It runs in its
own process, started by ``ScriptedLLMServer``, so the client's event loop and GIL add no
jitter to the server's timing and vice versa.

Endpoints, bound to 127.0.0.1 only:

- ``GET /health`` -> ``{"status": "ok"}``
- ``GET /v1/models`` -> ``{"object": "list", "data": [{"id": MODEL, "object": "model", ...}]}``
- ``POST /v1/completions``: a text completion, not streamed (the next queued answer, else the
  reply), for clients that continue a prompt;
- ``POST /v1/chat/completions`` with ``stream: true``: server-sent events as OpenAI sends them,
  each ``data: {json}\\n\\n`` with ``"object": "chat.completion.chunk"``; the first chunk's
  delta is ``{"role": "assistant", "content": TOKEN}``, later ones ``{"content": TOKEN}``, then
  a chunk with an empty delta and ``"finish_reason": "stop"``, a usage chunk (empty
  ``choices``) if ``stream_options.include_usage``, and ``data: [DONE]\\n\\n``. With
  ``stream: false``, one ``chat.completion`` object. Token counts in ``usage`` are word counts.

Timing: the first content chunk is written ``ttft_ms`` after the request arrived, each later
token ``token_delay_ms`` after the previous one's deadline (``scripted_timing``). "Arrived" is
when the request's last bytes reached the server's socket, as the kernel stamped them, so the
server's own lateness in waking up is not counted. With ``role_chunk_ms`` a role-only chunk
(``{"role": "assistant", "content": ""}``, as OpenAI sends first) is written that long after
the request, and the first content chunk carries no role. A non-streamed reply is sent when its
last token would have been.

The reply is ``reply`` if given, else a deterministic two-sentence supportive reply built from
the last user message; it is split into word tokens that keep their leading whitespace, so
the streamed tokens concatenate to exactly the reply.

Faults: request i (counting chat-completions requests from 0) gets ``faults[i]``, the rest
are normal. ``429``: status 429, ``Retry-After: 1`` and an OpenAI error body, at once.
``500``: status 500 and an OpenAI error body, at once. ``hang``: nothing is sent until the
client disconnects. ``empty``: a stream with no content chunk, only the finish chunk and
``[DONE]``. ``truncate``: the first content chunk (not streamed: half the JSON body), then the
connection is aborted.

Script (for scripted judges and other callers that need a given answer per request): ``POST
/script`` with ``{"content": TEXT or null, "fault": FAULT or null}`` queues one answer; each
chat-completions request takes the oldest queued answer first (its content replaces the
reply, its fault applies), and falls back to ``faults``/``reply`` when the queue is empty.
An answer may also carry ``"top_logprobs": {TOKEN: LOGPROB, ...}``: a non-streamed reply then
reports them as its first token's ``logprobs`` (what letter judges read).
``GET /history`` returns the JSON bodies of every chat-completions request received, in
order. ``ScriptedLLMServer.enqueue()`` and ``.history()`` wrap both.

Request log (``--log PATH``): one JSON line per chat-completions request, appended and flushed
when the request ends (see ``RequestRecord``)::

    {"received_ns": 1200, "first_token_sent_ns": 301250, "done_ns": 390000,
     "model": "scripted-llm", "n_messages": 2, "stream": true, "fault": null}

Stamps are ``time.perf_counter_ns()`` (CLOCK_MONOTONIC on Linux, one clock for every process
on the machine), so they compare directly with the client's own stamps.

CLI::

    python -m voicebench.testing.scripted_llm --port 0 --ttft-ms 300 --token-delay-ms 15 \\
        [--role-chunk-ms MS] [--reply TEXT] [--model NAME] [--log PATH] [--fault 429 ...]

prints exactly one line, ``READY http://127.0.0.1:PORT/v1``, once listening; exits cleanly on
SIGTERM or SIGINT, and on its own when its parent process dies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from aiohttp import web

from voicebench.llm.helper import HOST
from voicebench.testing.scripted_records import (
    FAULTS,
    Fault,
    RequestRecord,
    error_body,
    first_token_logprobs,
    supportive_reply,
    tokenize,
)
from voicebench.testing.scripted_timing import arrived, sleep_until

__all__ = ["FAULTS", "Fault", "RequestRecord", "main"]


class _Completions:
    """The chat-completions handler, holding the script and the request count."""

    def __init__(
        self,
        *,
        ttft_ms: float,
        token_delay_ms: float,
        reply: str | None,
        model: str,
        faults: tuple[Fault, ...],
        log_path: Path | None,
        role_chunk_ms: float | None = None,
    ) -> None:
        self.ttft_ns = round(ttft_ms * 1e6)
        self.role_ns = None if role_chunk_ms is None else round(role_chunk_ms * 1e6)
        self.token_ns = round(token_delay_ms * 1e6)
        self.reply, self.model, self.faults = reply, model, faults
        self.count = 0
        self.script: deque[dict[str, Any]] = deque()
        self.history: list[dict[str, Any]] = []
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115

    async def complete(self, request: web.Request) -> web.Response:
        """A text completion (not streamed): the oldest queued answer, else the reply; the
        request's body joins the history."""
        scripted = self.script.popleft() if self.script else None
        self.count += 1
        body = await request.json()
        self.history.append(body)
        await asyncio.sleep(self.ttft_ns / 1e9)
        text = (scripted or {}).get("content") or self.reply or "Okay."
        return web.json_response(
            {
                "id": f"cmpl-{self.count}",
                "object": "text_completion",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def handle(self, request: web.Request) -> web.StreamResponse:
        received_ns = time.perf_counter_ns()
        scripted = self.script.popleft() if self.script else None
        tops: dict[str, float] | None = None
        if scripted is not None:
            fault, content = scripted.get("fault"), scripted.get("content")
            tops = scripted.get("top_logprobs")
        else:
            fault = self.faults[self.count] if self.count < len(self.faults) else None
            content = None
        self.count += 1
        body: dict[str, Any] = {}
        sent: list[int] = []  # first_token_sent_ns, filled by whoever writes it
        try:
            body = await request.json()
            received_ns = arrived(request, received_ns)  # the body's last bytes are in
            self.history.append(body)
            if fault == "429":
                return web.json_response(
                    error_body("Rate limit reached (scripted).", "requests", "rate_limit_exceeded"),
                    status=429,
                    headers={"Retry-After": "1"},
                )
            if fault == "500":
                return web.json_response(
                    error_body("The server had an error (scripted).", "server_error", None),
                    status=500,
                )
            if fault == "hang":
                # Cancelled when the client disconnects (handler_cancellation) or at shutdown.
                await asyncio.Future()
            messages = body.get("messages") or []
            if content is not None:
                text = content
            else:
                text = self.reply if self.reply is not None else supportive_reply(messages)
            tokens = [] if fault == "empty" else tokenize(text)
            usage = {
                "prompt_tokens": sum(len(str(m.get("content", "")).split()) for m in messages),
                "completion_tokens": len(tokens),
            }
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return await self._stream(
                    request,
                    received_ns,
                    tokens,
                    usage if include_usage else None,
                    truncate=fault == "truncate",
                    sent=sent,
                )
            return await self._whole(
                request, received_ns, tokens, usage, sent, truncate=fault == "truncate", tops=tops
            )
        finally:
            self._record(
                RequestRecord(
                    received_ns=received_ns,
                    first_token_sent_ns=sent[0] if sent else None,
                    done_ns=time.perf_counter_ns(),
                    model=str(body.get("model") or self.model),
                    n_messages=len(body.get("messages") or []),
                    stream=bool(body.get("stream")),
                    fault=fault,
                )
            )

    async def _stream(
        self,
        request: web.Request,
        received_ns: int,
        tokens: list[str],
        usage: dict[str, int] | None,
        *,
        truncate: bool,
        sent: list[int],
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        writer = await resp.prepare(request)
        # Newer aiohttp holds headers back until the first body write; send them now so the
        # client has parsed them before the first token, as with a real provider.
        send_headers = getattr(writer, "send_headers", None)
        if send_headers is not None:
            send_headers()
        # "created" is OpenAI's Unix-seconds field, not a timing: wall clock is right there.
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
        }
        first_ns = received_ns + self.ttft_ns
        if self.role_ns is not None:
            role = {"role": "assistant", "content": ""}
            await sleep_until(received_ns + self.role_ns)
            await resp.write(_sse({**base, "choices": [{"index": 0, "delta": role}]}))
        for i, token in enumerate(tokens):
            first = i == 0 and self.role_ns is None
            delta = {"role": "assistant", "content": token} if first else {"content": token}
            data = _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            await sleep_until(first_ns + i * self.token_ns)
            await resp.write(data)
            if i == 0:
                sent.append(time.perf_counter_ns())
                if truncate and request.transport is not None:
                    request.transport.abort()
                    return resp
        await sleep_until(first_ns)  # an empty reply still takes the time to first token
        tail = _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if usage is not None:
            tail += _sse({**base, "choices": [], "usage": usage})
        await resp.write(tail + b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _whole(
        self,
        request: web.Request,
        received_ns: int,
        tokens: list[str],
        usage: dict[str, int],
        sent: list[int],
        *,
        truncate: bool,
        tops: dict[str, float] | None = None,
    ) -> web.StreamResponse:
        logprobs = first_token_logprobs(tokens, tops)
        body = json.dumps(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "usage": usage,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": logprobs,
                        "message": {"role": "assistant", "content": "".join(tokens)},
                    }
                ],
            }
        ).encode()
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.content_length = len(body)
        await sleep_until(received_ns + self.ttft_ns + max(len(tokens) - 1, 0) * self.token_ns)
        await resp.prepare(request)
        if truncate and request.transport is not None:
            # Half the promised body, then the connection drops.
            await resp.write(body[: len(body) // 2])
            request.transport.abort()
            return resp
        await resp.write(body)
        await resp.write_eof()
        sent.append(time.perf_counter_ns())
        return resp

    def _record(self, record: RequestRecord) -> None:
        if self.log is not None:
            self.log.write(record.model_dump_json() + "\n")
            self.log.flush()  # a reader may look at any time; a killed server loses nothing


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def main(argv: list[str] | None = None) -> None:
    """The command line: parse options, serve."""
    parser = argparse.ArgumentParser(
        prog="python -m voicebench.testing.scripted_llm",
        description="Scripted OpenAI-compatible LLM server.",
    )
    parser.add_argument("--host", default=HOST, choices=[HOST], help="loopback only")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--ttft-ms", type=float, default=100.0)
    parser.add_argument("--token-delay-ms", type=float, default=10.0)
    parser.add_argument(
        "--role-chunk-ms", type=float, default=None, help="send a role-only chunk first, then"
    )
    parser.add_argument("--reply", default=None, help="fixed reply (default: derived from input)")
    parser.add_argument("--model", default="scripted-llm")
    parser.add_argument("--log", type=Path, default=None, help="append one JSON line per request")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        choices=FAULTS,
        help="fault for the next request in order; repeat for more",
    )
    args = parser.parse_args(argv)
    completions = _Completions(
        ttft_ms=args.ttft_ms,
        token_delay_ms=args.token_delay_ms,
        reply=args.reply,
        model=args.model,
        faults=tuple(args.fault),
        log_path=args.log,
        role_chunk_ms=args.role_chunk_ms,
    )
    from voicebench.testing.scripted_app import serve

    asyncio.run(serve(completions, port=args.port, host=args.host))


if __name__ == "__main__":
    main()
