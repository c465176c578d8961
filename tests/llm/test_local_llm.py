"""The local llama.cpp server: packaged model, real HTTP on 127.0.0.1, nothing left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from voicebench.errors import InputError
from voicebench.llm import LlamaServer, resolve_gguf

pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_packaged_model_resolves_and_bad_paths_are_refused(tmp_path: Path):
    path = resolve_gguf("smollm2-135m")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    with pytest.raises(InputError, match=r"llm\.model: '.*nope\.gguf' is neither a packaged model"):
        resolve_gguf(str(tmp_path / "nope.gguf"))


def test_server_answers_a_chat_request_then_stops():
    from openai import OpenAI

    with LlamaServer(resolve_gguf("smollm2-135m"), model_alias="smollm2-135m") as srv:
        pid = srv.process.pid
        assert srv.base_url.startswith("http://127.0.0.1:")
        client = OpenAI(base_url=srv.base_url, api_key="local")
        reply = client.chat.completions.create(
            model="smollm2-135m",
            temperature=0,
            max_tokens=20,
            messages=[{"role": "user", "content": "Say hello to a friend."}],
        )
        assert reply.choices[0].message.content.strip()
    assert not _alive(pid)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{srv.base_url}/models", timeout=2)


def test_a_killed_parent_takes_its_server_with_it(tmp_path: Path):
    script = (
        "import json, sys, time\n"
        "from voicebench.llm import LlamaServer, resolve_gguf\n"
        "srv = LlamaServer(resolve_gguf('smollm2-135m')).start()\n"
        "print(json.dumps({'pid': srv.process.pid}), flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = json.loads(parent.stdout.readline())["pid"]
        assert _alive(server_pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 20
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(server_pid), "the llama.cpp server outlived a SIGKILLed voicebench"
    finally:
        parent.kill()
