"""The scripted agent the replay tests run: the real pipeline with the scripted
OpenAI-compatible server on 127.0.0.1 as its LLM, over the built-in dialogues and fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.dialogues import BUILTIN_DIALOGUES
from voicebench.fixtures import BUILTIN_FIXTURES

REPLY = "I hear how heavy this is. What feels hardest right now?"


def scripted(ttft_ms: float = 200, **over) -> AgentSpec:
    """The scripted LLM answering ``REPLY`` ``ttft_ms`` after each request."""
    return AgentSpec(
        name="scripted",
        family="scripted",
        llm=LLMSpec(
            provider="scripted",
            model="scripted-llm",
            ttft_ms=ttft_ms,
            token_delay_ms=5,
            reply=REPLY,
        ),
        **over,
    )


def builtin_run(dialogues, out_dir: Path) -> dict[str, Any]:
    """``replay`` arguments for ``dialogues`` of the built-in set, written to ``out_dir``."""
    return dict(
        spec_path=Path("agents/scripted.toml"),
        dialogues=dialogues,
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=out_dir,
    )
