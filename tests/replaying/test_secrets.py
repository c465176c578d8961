"""A run made with a dummy key, with pipecat's debug log on: the key is in no file it leaves
behind (run log, audio, header, report, debug log)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loguru import logger

from voicebench.agentspec import AgentSpec, LLMSpec, api_key
from voicebench.replaying import replay
from voicebench.reporting import build_report
from voicebench.testing import ScriptedLLMServer

pytestmark = pytest.mark.slow

KEY = "sk-dummy-7f3a9c2e5b8d1046aa91c3e8f0b2d574"


async def test_no_output_of_a_keyed_run_holds_the_key(tmp_path: Path, monkeypatch, short_set):
    monkeypatch.setenv("VB_TEST_DUMMY_KEY", KEY)
    debug = tmp_path / "debug.log"
    sink = logger.add(debug, level="DEBUG")
    try:
        async with ScriptedLLMServer(ttft_ms=100) as llm:
            spec = AgentSpec(
                name="keyed",
                family="test",
                llm=LLMSpec(
                    provider="openai-compatible",
                    model="scripted-llm",
                    base_url=llm.base_url,
                    api_key_env="VB_TEST_DUMMY_KEY",
                ),
            )
            assert api_key(spec) == KEY  # the pipeline's client is built with it
            dialogue = short_set.item("short-dog")  # two short spoken turns
            records = await replay(
                spec,
                **short_set.run([dialogue], tmp_path / "run", Path("keyed.toml")),
            )
    finally:
        logger.remove(sink)
    assert all(r.error is None for r in records)
    build_report([tmp_path / "run"], tmp_path / "report")
    assert debug.stat().st_size > 0  # pipecat did log
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert len(files) > 10
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    assert "VB_TEST_DUMMY_KEY" in (tmp_path / "run" / "run.json").read_text()
