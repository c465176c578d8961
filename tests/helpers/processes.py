"""Watching and killing real voicebench subprocesses: process listings, and SIGKILL at seeded
random moments until a command finishes on its own."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KILL_AGENT = """\
name = "kill-test"
family = "scripted"
[stt]
provider = "whisper"
model = "tiny.en"
[llm]
provider = "scripted"
model = "scripted-llm"
ttft_ms = 100
token_delay_ms = 5
reply = "I hear you. That sounds really hard."
[tts]
provider = "piper"
voice = "en_US-joe-medium"
"""
"""The agent spec the kill tests run: the real pipeline, the scripted LLM answering fast."""
KILL_SEEDS_ENV = "VOICEBENCH_KILL_SEEDS"


def kill_seeds(seeds: tuple[int, ...]) -> tuple[int, ...]:
    """The kill tests' seeds: the first by default (each seed is a minute or more of real
    replay), every one with ``VOICEBENCH_KILL_SEEDS=all``, or those listed (``12,13``)."""
    wanted = os.environ.get(KILL_SEEDS_ENV, "").strip()
    if not wanted:
        return seeds[:1]
    if wanted == "all":
        return seeds
    return tuple(int(s) for s in wanted.split(","))


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        found = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True)
        for child in map(int, found.stdout.split()):
            out.add(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def survivors(pids: set[int], grace_s: float = 10.0) -> list[int]:
    """Those of ``pids`` still running after ``grace_s``."""
    deadline = time.monotonic() + grace_s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return sorted(p for p in pids if alive(p))


USER_PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=")
"""pytest as a user runs it on their own suite: none of this project's ``addopts``."""


def user_env(**extra: str) -> dict[str, str]:
    """The environment for ``USER_PYTEST``: this one, without the options this run's own
    pytest was given (``PYTEST_ADDOPTS``: a CI run's ``--maxfail=1`` must not reach a user's
    suite), and ``extra``."""
    return {**os.environ, "PYTEST_ADDOPTS": "", **extra}


def voicebench(*args: str) -> list[str]:
    return [sys.executable, "-m", "voicebench", *args]


def as_in_a_terminal() -> None:
    """``preexec_fn`` for a child that Ctrl-C must reach: a shell running the tests in the
    background has SIGINT ignored, and children inherit that, as a terminal's never do."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class KillLog:
    """What ``kill_until_done`` did."""

    kills_at_s: list[float] = field(default_factory=list)
    """Seconds after each start at which SIGKILL was sent."""
    done_at_kill: list[int] = field(default_factory=list)
    """How many records were finished on disk at each kill."""
    helpers_seen: int = 0
    """Helper processes running under the command when it was killed, over all kills."""
    left_running: list[int] = field(default_factory=list)
    """Helper processes that outlived their killed parent by 10 s (must be empty)."""
    final_stderr: str = ""
    final_wall_s: float = 0.0
    """How long the last start, the one that finished, ran."""


def kill_until_done(
    command: list[str],
    seed: int,
    *,
    window_s: tuple[float, float],
    max_kills: int,
    log_dir: Path,
    done: Callable[[], int] = lambda: 0,
    timeout_s: float = 600,
) -> KillLog:
    """Start ``command``; SIGKILL it at a seeded random moment within ``window_s`` (seconds
    after its start); start it again, and so on, ``max_kills`` times at most, then let it finish.
    The process tree is listed just before each kill, and its helpers must die with it; ``done()``
    counts the records finished on disk at that moment."""
    rng = random.Random(seed)
    log = KillLog()
    attempt = 0
    while True:
        attempt += 1
        stderr_path = log_dir / f"stderr-{seed}-{attempt}.txt"
        started = time.monotonic()
        with stderr_path.open("w") as stderr:
            proc = subprocess.Popen(
                command,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        kill_at = rng.uniform(*window_s) if len(log.kills_at_s) < max_kills else None
        try:
            code = proc.wait(timeout=kill_at if kill_at is not None else timeout_s)
        except subprocess.TimeoutExpired:
            if kill_at is None:
                proc.kill()
                raise
            helpers = descendants(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            log.kills_at_s.append(round(kill_at, 2))
            log.done_at_kill.append(done())
            log.helpers_seen += len(helpers)
            log.left_running += survivors(helpers)
            continue
        log.final_wall_s = time.monotonic() - started
        log.final_stderr = stderr_path.read_text(errors="replace")
        assert code == 0, f"{command} exited {code}:\n{log.final_stderr[-3000:]}"
        return log


def ray_processes() -> list[str]:
    """Command lines of Ray's processes on this machine."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "ray::" in cmd or "/ray/core/src/ray/" in cmd or "ray/_private/" in cmd:
            found.append(f"{entry.name} {cmd[:120]}")
    return found


def complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0
