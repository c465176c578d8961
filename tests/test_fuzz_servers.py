"""Both servers' message handlers, and the caller's handler of what an agent sends, fuzzed:
whatever a stranger sends, the answer is one of the protocol's own (never a traceback, never a
500), and nothing half-written is left behind.

- ``serve``: ``caller_message`` reads each WebSocket message of a call in every protocol, and
  ``refusal`` each handshake.
- ``annotate``: ``POST /answer`` on a running server, with a session.
- the remote-agent caller: ``Loudspeaker.hear`` takes each message an agent sends.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzzing import fuzz_settings
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from voicebench.live.serve import (
    MAX_CONTEXT_CHARS,
    MAX_CONTEXT_MESSAGES,
    Refused,
    caller_message,
    refusal,
)
from voicebench.remote.codecs import agent_codec, codec
from voicebench.remote.loudspeaker import MAX_EVENTS, MAX_MARKS, Loudspeaker

FUZZ = fuzz_settings(HealthCheck.function_scoped_fixture)
TOKEN = "fuzz-token-0123456789abcdef"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.just("a\u2028b\u2029c\u0085d"),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


chat = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", 3]), "content": st.text()}
)
messages = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=200),
    json_values.map(json.dumps),
    st.sampled_from([deep(900), deep(5_000), deep(100_000), '{"type": ' * 3_000]),
    st.builds(
        lambda m, n: json.dumps({"type": "context", "messages": m * n}),
        st.lists(chat, max_size=3),
        st.sampled_from([1, 2, 70, MAX_CONTEXT_MESSAGES + 1]),
    ),
    st.builds(
        lambda kind, extra: json.dumps({"type": kind, **extra}),
        st.sampled_from(["start", "stop", "context", "transcript", "reply", "error", "mark"]),
        st.dictionaries(st.sampled_from(["messages", "text", "name", "sample_rate"]), json_values),
    ),
    st.builds(
        lambda event, payload: json.dumps(
            {"event": event, "media": {"payload": payload}, "mark": {"name": payload}}
        ),
        st.sampled_from(["media", "mark", "stop", "start", "clear", "connected"]),
        st.one_of(st.binary(max_size=300).map(lambda b: base64.b64encode(b).decode()), st.text()),
    ),
)


@FUZZ
@given(st.sampled_from(["pcm", "pipecat", "twilio", "telnyx"]), messages)
def test_serve_reads_any_callers_message(protocol: str, message: str | bytes):
    what = caller_message(agent_codec(protocol, 16_000), message)
    if isinstance(what, bytes):
        assert len(what) % 2 == 0  # whole samples only
    elif isinstance(what, list):
        assert len(what) <= MAX_CONTEXT_MESSAGES
        assert sum(len(m["content"]) for m in what) <= MAX_CONTEXT_CHARS
        assert all(
            m["role"] in ("user", "assistant") and isinstance(m["content"], str) for m in what
        )
    elif isinstance(what, Refused):
        assert what.reason.startswith("context of") and len(what.reason.encode()) <= 123
    else:
        assert what in (None, "ready", "stop")


@FUZZ
@given(
    st.one_of(st.text(max_size=80), st.just(f"/?token={TOKEN}"), st.just(f"/x?token={TOKEN}&a=1")),
    st.dictionaries(
        st.sampled_from(["Authorization", "Origin", "Cookie", "X"]),
        st.one_of(st.text(max_size=60), st.just(f"Bearer {TOKEN}"), st.just(TOKEN)),
    ),
)
def test_serve_judges_any_handshake(path: str, headers: dict[str, str]):
    why = refusal(path, headers, TOKEN, allowed_origins=("https://ok.example",))
    if why is None:
        presented = headers.get("Authorization", "").removeprefix("Bearer ").strip() == TOKEN
        assert presented or f"token={TOKEN}" in path
        assert headers.get("Origin") in (None, "https://ok.example")
    else:
        assert why in ("missing or wrong token",) or why.startswith("origin ")
        assert len(why.encode()) <= 123  # it fits a WebSocket close frame


agent_messages = st.one_of(
    messages,
    st.builds(
        lambda text: json.dumps({"type": "reply", "text": text}),
        st.text(min_size=1000, max_size=3000),
    ),
)


@FUZZ
@given(st.sampled_from(["pcm", "pipecat", "twilio"]), st.lists(agent_messages, max_size=30))
def test_the_caller_hears_any_agent_message(protocol: str, sent: list[str | bytes]):
    async def hear_all() -> Loudspeaker:
        side = codec(protocol, 16_000)
        speaker = Loudspeaker(side.sample_rate, side, lambda _m: None)
        speaker.start_recording(2.0)
        speaker.new_turn(0, 0)
        for k, message in enumerate(sent * 20):
            speaker.hear(message, k * 1_000_000)
        speaker.close()
        return speaker

    speaker = asyncio.run(hear_all())
    assert len(speaker.events) <= MAX_EVENTS and len(speaker.marks) <= MAX_MARKS
    assert speaker.recorded <= speaker.max_recorded


# annotate's POST /answer, on a server running in a thread of its own ----------------------


@pytest.fixture(scope="module")
def rating_server(tmp_path_factory) -> Iterator[tuple[int, dict[str, str], Path, list[str]]]:
    from synthetic_runs import judged_against_reference

    from voicebench.annotate import open_rating, serve_rating
    from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues

    root = tmp_path_factory.mktemp("fuzz-annotate")
    items = load_dialogues(BUILTIN_DIALOGUES)[:4]
    _, judged = judged_against_reference(root, items)
    state, _ = open_rating(judged, "fuzz", per_rater=4, seed=1)
    ready = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(
            serve_rating(state, port=0, on_ready=lambda _url: ready.set(), stop=stop)
        )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    conn = http.client.HTTPConnection("127.0.0.1", state.port, timeout=10)
    conn.request("GET", f"/?token={state.access_token}")
    landing = conn.getresponse()
    landing.read()
    jar = dict(
        re.match(r"([^=]+)=([^;]+)", cookie).groups()
        for cookie in landing.msg.get_all("Set-Cookie") or []
    )
    session = next(v for k, v in jar.items() if k.startswith("vb_session"))
    headers = {
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
        "X-Session-Token": session,
        "Content-Type": "application/json",
    }
    yield state.port, headers, state.path, [t.id for t in state.plan.tasks]
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


answers = st.one_of(
    st.builds(  # well-formed answers, with any comment: some are taken
        lambda choice, comment: json.dumps(
            {"task": "0" * 16, "choice": choice, "comment": comment, "played": ["a"]}
        ).encode(),
        st.integers(1, 5),
        st.text(max_size=100),
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=300),
    st.sampled_from([deep(900).encode(), deep(20_000).encode(), b'{"task": ' * 5_000]),
    st.builds(
        lambda task, choice, dims, comment, played, seconds: json.dumps(
            {
                "task": task,
                "choice": choice,
                "dimensions": dims,
                "comment": comment,
                "played": played,
                "seconds": seconds,
            }
        ).encode(),
        st.one_of(st.text(max_size=20), st.sampled_from(["0" * 16, "f" * 16])),
        st.one_of(st.integers(-2, 8), st.text(max_size=3), st.none()),
        st.one_of(json_values, st.just({"E": "A", "H": "B"})),
        st.one_of(st.text(max_size=50), st.just("a\u2028b\u2029c\u0085d"), st.just("x" * 3000)),
        st.one_of(st.lists(st.sampled_from(["seeker", "a", "b", "c"]), max_size=4), json_values),
        st.one_of(st.floats(allow_nan=False), st.none(), st.text(max_size=5)),
    ),
)


@FUZZ
@given(body=answers, valid_task=st.booleans())
def test_annotate_answers_any_body_with_a_4xx_or_a_whole_line(rating_server, body, valid_task):
    port, headers, path, tasks = rating_server
    if valid_task:  # make it about a real task, so some answers are taken
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            parsed["task"] = tasks[len(body) % len(tasks)]
            body = json.dumps(parsed).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/answer", body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status in (200, 400, 404, 409, 413), (response.status, body[:200])
    raw = path.read_bytes() if path.exists() else b""
    assert raw == b"" or raw.endswith(b"\n")  # no half-written answer
    for line in raw.split(b"\n")[:-1]:
        answer = json.loads(line)
        assert answer["task"] in tasks and answer["rater"] == "fuzz"


def test_some_fuzzed_answers_were_taken(rating_server):
    """The fuzzing above reached the writing path too: answers of real tasks were kept."""
    _, _, path, tasks = rating_server
    kept = [json.loads(line) for line in path.read_text().split("\n") if line]
    assert 1 <= len(kept) <= len(tasks)
