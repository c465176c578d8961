"""The campaign file the campaign tests start from: the scripted agent at two LLM speeds on
the built-in set (or the short set, ``tests/helpers/short_set.py``), clean and barge-in cells, the
offline smoke judge."""

from __future__ import annotations

from pathlib import Path

from short_set import ShortSet

ROOT = Path(__file__).resolve().parents[2]


def two_speeds(slower_ms: int, limit: int, short: ShortSet | None = None) -> str:
    """``s-300`` and ``s-{slower_ms}`` on ``limit`` items of the built-in set, or of the short
    set when given; ``ROOT`` stands for the checkout."""
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

{dialogue_set(short)}limit = {limit}
"""


def dialogue_set(short: ShortSet | None) -> str:
    """A ``[[dialogues]]`` table's path (and fixtures) lines."""
    if short is None:
        return '[[dialogues]]\npath = "ROOT/audio_fixtures/dialogues.jsonl"\n'
    return f'[[dialogues]]\npath = "{short.dialogues_path}"\nfixtures = "{short.fixtures_dir}"\n'


def write_campaign(folder: Path, body: str) -> Path:
    """``body`` as ``folder/c.toml``, with ``ROOT`` made the checkout's path."""
    path = folder / "c.toml"
    path.write_text(body.replace("ROOT", str(ROOT)))
    return path
