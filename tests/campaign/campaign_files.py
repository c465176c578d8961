"""The campaign file the campaign tests start from: the scripted agent at two LLM speeds on
the built-in set, clean and barge-in cells, the offline smoke judge."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def two_speeds(slower_ms: int, limit: int) -> str:
    """``s-300`` and ``s-{slower_ms}`` on ``limit`` items; ``ROOT`` stands for the checkout."""
    return f"""
name = "two speeds"
scenarios = [[], ["barge-in:delay_ms=600"]]
judges = ["ROOT/judges/local-smoke.toml"]

[[agents]]
spec = "ROOT/agents/scripted.toml"
name = "s-300"

[[agents]]
spec = "ROOT/agents/scripted.toml"
name = "s-{slower_ms}"
set = {{ "llm.ttft_ms" = {slower_ms} }}

[[dialogues]]
path = "ROOT/audio_fixtures/dialogues.jsonl"
limit = {limit}
"""


def write_campaign(folder: Path, body: str) -> Path:
    """``body`` as ``folder/c.toml``, with ``ROOT`` made the checkout's path."""
    path = folder / "c.toml"
    path.write_text(body.replace("ROOT", str(ROOT)))
    return path
