"""The seeker asked by text completion (the offline default's method): the prompt is the card
and the call ending on ``Caller:``; a broken line is named in the prompt asked again."""

from __future__ import annotations

import contextlib

import pytest

from voicebench.calling.seeker import (
    DEFAULT_SEEKER,
    NOT_THIS,
    Seeker,
    SeekerCache,
    SeekerSpec,
    open_seeker,
)
from voicebench.dialogues.personas import load_personas
from voicebench.testing.scripted_server import ScriptedLLMServer


def spec(server: ScriptedLLMServer) -> SeekerSpec:
    return SeekerSpec.model_validate(
        {
            "llm": {
                "provider": "openai-compatible",
                "model": "scripted-llm",
                "base_url": server.base_url,
            },
            "method": "completion",
        }
    )


async def test_a_completion_seeker_continues_the_transcript(tmp_path):
    card = load_personas()[0]
    heard = [("I lost my job today.", "That sounds like a heavy day. What happened?")]
    with ScriptedLLMServer(ttft_ms=5) as server:
        server.enqueue(" I'm sorry to hear that. How can I help you?")  # the supporter's voice
        server.enqueue(" They just called me in and it was over, like that.")
        async with contextlib.AsyncExitStack() as stack:
            clients = await open_seeker(spec(server), stack, seed=5)
            seeker = Seeker(
                spec(server),
                clients.lines,
                SeekerCache(tmp_path / "cache.jsonl"),
                again=clients.again,
            )
            line = await seeker.next_line(card, "Hello, you're through.", heard, 2)
        first, second = server.history()
    assert line.text == "They just called me in and it was over, like that."
    assert line.breaks == ("speaking as the supporter",)
    # One prompt each, continued from the caller's label, up to the end of the line.
    assert "messages" not in first and first["prompt"].endswith("\nCaller:")
    assert first["stop"] == ["\n"] and card.who in first["prompt"]
    assert "Supporter: That sounds like a heavy day. What happened?" in first["prompt"]
    note = NOT_THIS.format(
        line="I'm sorry to hear that. How can I help you?", why="speaking as the supporter"
    )
    assert note not in first["prompt"] and note in second["prompt"]
    assert second["prompt"].endswith("\nCaller:")
    # Asked first at the spec's temperature, again by sampling, seeded with the run's seed.
    assert (first["temperature"], second["temperature"]) == (0.0, 0.8)
    assert first["seed"] == second["seed"] == 5


def test_completion_needs_the_openai_api_and_is_the_offline_default():
    assert DEFAULT_SEEKER.method == "completion"
    with pytest.raises(ValueError, match="needs a provider with the OpenAI API"):
        SeekerSpec.model_validate(
            {
                "llm": {"provider": "anthropic", "model": "claude", "api_key_env": "K"},
                "method": "completion",
            }
        )


async def test_a_line_said_again_breaks_role_and_is_asked_again_by_sampling(tmp_path):
    """A loop at temperature 0, nearly word for word (a word put before it), and then once more
    when sampled: each is refused, named in the prompt, and counted; a third would make the call
    invalid."""
    card = load_personas()[0]
    heard = [("I lost my job today and I'm scared.", "I'm so sorry. That's hard.")]
    with ScriptedLLMServer(ttft_ms=5) as server:
        server.enqueue(" Yeah, I lost my job today and I'm scared.")  # a loop at temperature 0
        server.enqueue(" I lost my job today, and I'm scared.")  # sampled, and again
        server.enqueue(" And I haven't told my wife yet.")
        async with contextlib.AsyncExitStack() as stack:
            clients = await open_seeker(spec(server), stack, seed=1)
            cache = SeekerCache(tmp_path / "cache.jsonl")
            seeker = Seeker(spec(server), clients.lines, cache, again=clients.again)
            line = await seeker.next_line(card, "Hello.", heard, 3)
            again = await seeker.next_line(card, "Hello.", heard, 3)  # from the cache
        first, second, third = server.history()  # nothing asked a fourth time
    assert line.text == "And I haven't told my wife yet."
    assert line.breaks == ("saying an earlier line again",) * 2
    note = NOT_THIS.format(
        line="Yeah, I lost my job today and I'm scared.", why="saying an earlier line again"
    )
    assert note not in first["prompt"] and note in second["prompt"] and note in third["prompt"]
    assert (first["temperature"], second["temperature"], third["temperature"]) == (0.0, 0.8, 0.8)
    assert again == line
