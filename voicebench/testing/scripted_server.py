"""``ScriptedLLMServer``: the scripted LLM server (``voicebench.testing.scripted_llm``) run in
its own process, with its request log, its script queue and its history at hand."""

from __future__ import annotations

import json
import re
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from voicebench._jsonl import read_models
from voicebench.errors import RunError
from voicebench.llm.helper import HOST, HelperServer
from voicebench.testing.scripted_records import FAULTS, Fault, RequestRecord


class ScriptedLLMServer(HelperServer):
    """Runs the server in a subprocess; a sync or async context manager.

    ``with ScriptedLLMServer(ttft_ms=200) as llm: OpenAI(base_url=llm.base_url, api_key="x")``
    """

    what = "scripted LLM server"

    def __init__(
        self,
        *,
        ttft_ms: float = 100,
        token_delay_ms: float = 10,
        reply: str | None = None,
        model: str = "scripted-llm",
        faults: tuple[Fault, ...] | list[Fault] = (),
        role_chunk_ms: float | None = None,
    ) -> None:
        bad = [f for f in faults if f not in FAULTS]
        if bad:
            raise ValueError(f"unknown faults {bad}; choose from {FAULTS}")
        self.model = model
        # Kept until this object is collected, so the log stays readable after stop().
        self._tmp = tempfile.TemporaryDirectory(prefix="scripted-llm-")
        args = [
            "--port",
            "0",
            "--log",
            str(self.log_path),
            "--ttft-ms",
            str(ttft_ms),
            "--token-delay-ms",
            str(token_delay_ms),
            "--model",
            model,
            *(a for f in faults for a in ("--fault", f)),
        ]
        if reply is not None:
            args += ["--reply", reply]
        if role_chunk_ms is not None:
            args += ["--role-chunk-ms", str(role_chunk_ms)]
        super().__init__(
            self.python_module("voicebench.testing.scripted_llm", *args),
            ready_pattern=rf"READY http://{re.escape(HOST)}:(\d+)/v1",
        )

    @property
    def port(self) -> int | None:
        """The port it listens on, while it runs."""
        running = self.process is not None and self.process.poll() is None
        return int(self.ready_match.group(1)) if running and self.ready_match else None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the OpenAI client's ``base_url``."""
        if self.port is None:
            raise RunError("the scripted LLM server is not running")
        return f"http://{HOST}:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        """Where the server appends its request log."""
        return Path(self._tmp.name) / "requests.jsonl"

    def requests(self, at_least: int = 0, timeout_s: float = 5.0) -> list[RequestRecord]:
        """The request log so far, in order of completion. A request is logged just after its
        reply's last byte is sent, so a client may have read the reply first: ``at_least``
        waits (up to ``timeout_s``) until that many requests are logged."""
        deadline = time.monotonic() + timeout_s
        records = read_models(self.log_path, RequestRecord)
        while len(records) < at_least and time.monotonic() < deadline:
            time.sleep(0.005)
            records = read_models(self.log_path, RequestRecord)
        return records

    def enqueue(
        self,
        content: str | None = None,
        *,
        fault: Fault | None = None,
        top_logprobs: dict[str, float] | None = None,
    ) -> None:
        """Queue the answer (or fault) for the next request that finds the queue non-empty;
        ``top_logprobs`` become the first token's log-probabilities in a non-streamed reply."""
        payload: dict[str, Any] = {"content": content, "fault": fault}
        if top_logprobs is not None:
            payload["top_logprobs"] = top_logprobs
        self._call("POST", "/script", payload)

    def history(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat-completions requests received so far."""
        return self._call("GET", "/history")

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        if self.port is None:
            raise RunError("the scripted LLM server is not running")
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(
            f"http://{HOST}:{self.port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:  # loopback only
            return json.loads(resp.read())
