"""Helper servers: a process voicebench starts on 127.0.0.1, waits for, and stops for sure.

One lifecycle for every helper (the llama.cpp server behind the local provider, the scripted
LLM server and the scripted voice agent):

- start: the process is spawned from the calling thread (on Linux it is told to receive
  SIGTERM when voicebench dies, so a killed run leaves nothing behind; the kernel ties that
  to the thread that forks, hence never from a pool thread), then waited for until ready;
- ready: either its first stdout line matches a ``READY ...`` pattern, or an HTTP GET of its
  health URL answers 200; a process that exits or stays silent fails with its log's tail;
- stop: SIGTERM, a grace period, then SIGKILL; the process is always reaped.

``with server:`` starts and stops it from synchronous code. ``async with server:`` spawns on
the event loop's thread but waits for readiness and for the stop in a worker thread, so the
loop keeps serving meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from importlib.resources import files
from pathlib import Path
from typing import Self

from voicebench.errors import RunError

HOST = "127.0.0.1"
PACKAGE_PARENT = str(Path(str(files("voicebench"))).parent)
"""The folder voicebench is imported from, put on a helper's path: it need not be installed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to the helper when voicebench dies.
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


class HelperServer:
    """A helper process: give it a command and how it says it is ready.

    ``ready_pattern``: a regular expression its first stdout line must match (the match is
    kept in ``self.ready_match``); ``health_url``: a URL that must answer 200. Exactly one.
    """

    what = "helper server"

    def __init__(
        self,
        args: list[str],
        *,
        ready_pattern: str | None = None,
        health_url: str | None = None,
        start_timeout_s: float = 20.0,
        stop_timeout_s: float = 5.0,
    ) -> None:
        if (ready_pattern is None) == (health_url is None):
            raise ValueError("give exactly one of ready_pattern and health_url")
        self.args = args
        self.ready_pattern, self.health_url = ready_pattern, health_url
        self.start_timeout_s, self.stop_timeout_s = start_timeout_s, stop_timeout_s
        self.process: subprocess.Popen[str] | None = None
        self.ready_match: re.Match[str] | None = None
        self._log_path: Path | None = None
        self._first_line: queue.Queue[str] = queue.Queue()

    @staticmethod
    def python_module(module: str, *args: str) -> list[str]:
        """``python -m module args`` with this interpreter."""
        return [sys.executable, "-m", module, *args]

    def spawn(self) -> None:
        """Start the process (fast: it does not wait for readiness)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
        # The process's log, a file kept until stop() (an error at start-up quotes its tail);
        # the child holds its own descriptor, so ours is closed at once.
        fd, name = tempfile.mkstemp(prefix="voicebench-helper-", suffix=".log")
        self._log_path = Path(name)
        lines = self.ready_pattern is not None
        with os.fdopen(fd, "wb") as log:
            self.process = subprocess.Popen(
                self.args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if lines else log,
                stderr=log if lines else subprocess.STDOUT,
                text=True,
                env=env,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        if lines:
            out = self.process.stdout
            assert out is not None
            threading.Thread(
                target=lambda: self._first_line.put(out.readline()), daemon=True
            ).start()

    def wait_ready(self) -> None:
        """Block until the process is ready; RunError (and the process stopped) otherwise."""
        try:
            if self.ready_pattern is not None:
                self._wait_line(self.ready_pattern)
            else:
                assert self.health_url is not None
                self._wait_health(self.health_url)
        except BaseException:
            self.stop()
            raise

    def _wait_line(self, pattern: str) -> None:
        try:
            line = self._first_line.get(timeout=self.start_timeout_s)
        except queue.Empty:
            line = ""
        self.ready_match = re.fullmatch(pattern, line.strip())
        if self.ready_match is None:
            raise RunError(
                f"{self.what} did not become ready within {self.start_timeout_s:g} s "
                f"(stdout {line!r}); its log:\n{self.log_tail()}"
            )

    def _wait_health(self, url: str) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RunError(f"the {self.what} exited at start-up:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:  # loopback only
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise RunError(f"the {self.what} did not answer within {self.start_timeout_s:.0f} s")

    def start(self) -> Self:
        """Spawn and wait until ready."""
        self.spawn()
        self.wait_ready()
        return self

    def stop(self) -> None:
        """SIGTERM, the grace period, then SIGKILL; always reaps the process."""
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def log_tail(self, n: int = 2000) -> str:
        """The end of what the process wrote to its log (stderr, or all output)."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_bytes().decode("utf-8", "replace")[-n:]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        self.spawn()  # on the loop's own thread: see the module docstring
        await asyncio.to_thread(self.wait_ready)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def __del__(self) -> None:  # last resort; the context managers stop it properly
        proc = getattr(self, "process", None)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(Exception):
                os.kill(proc.pid, signal.SIGKILL)
        log = getattr(self, "_log_path", None)
        if log is not None:
            with contextlib.suppress(Exception):
                log.unlink(missing_ok=True)
