"""The servers a LiveKit spec asks for, on the port it names: code that writes its base_url out
(LiveKit's quick-start, ``base_url="http://127.0.0.1:8000/v1"``) finds them there."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest

from voicebench.agentspec import LiveKitSpec
from voicebench.livekit.servers import SPEECH_URL, local_servers
from voicebench.llm.helper import free_port

pytestmark = pytest.mark.slow


async def test_the_speech_endpoints_serve_on_the_port_the_spec_names(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv(SPEECH_URL, raising=False)
    port = free_port()
    spec = LiveKitSpec(entrypoint="agent:entrypoint", serve_speech="tiny.en", speech_port=port)
    async with local_servers(spec) as urls:
        assert urls == {SPEECH_URL: f"http://127.0.0.1:{port}/v1"}
        assert os.environ[SPEECH_URL] == urls[SPEECH_URL]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as reply:
            assert json.load(reply) == {"status": "ok"}
