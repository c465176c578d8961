"""Starting a test server in its own Python process and stopping it for sure.

The child prints exactly one line, ``READY <address>``, once it listens; its stderr goes to a
file (a pipe could fill up and block it). Stopping is SIGTERM, a grace period, then SIGKILL,
and the process is always reaped.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

from voicebench.errors import RunError

READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 5.0


def start_ready_process(module: str, args: list[str], workdir: Path, pattern: str,
                        what: str) -> tuple[subprocess.Popen[str], re.Match[str]]:
    """Run ``python -m module args`` and wait for its READY line, matched by ``pattern``."""
    stderr_path = workdir / "stderr.txt"
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # voicebench need not be installed
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    with open(stderr_path, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen([sys.executable, "-m", module, *args],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=stderr, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=lambda out=process.stdout: lines.put(out.readline()),
                     daemon=True).start()
    try:
        line = lines.get(timeout=READY_TIMEOUT_S)
    except queue.Empty:
        line = ""
    match = re.fullmatch(pattern, line.strip())
    if match is None:
        stop_process(process)
        raise RunError(f"{what} did not become ready within {READY_TIMEOUT_S:g} s "
                       f"(stdout {line!r}); stderr:\n{stderr_path.read_text(errors='replace')}")
    return process, match


def stop_process(process: subprocess.Popen[str] | None) -> None:
    if process is None:
        return
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


class ProcessContext:
    """``start()`` and ``stop()`` as a sync and an async context manager (the async one runs
    them in a thread, so a test's event loop keeps serving while the child starts)."""

    def start(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def stop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self):
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

