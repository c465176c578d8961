"""Output folders have one writer and hold one kind of output; recorded paths stay inside their
folder; names that would share a folder are refused."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import ROOT, voicebench
from synthetic_runs import judged_against_reference, make_run

from voicebench._folder import FolderBusy, Outside, claim, inside, release
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.judging import read_replies

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:2]
HOLD = """
import sys, time
from pathlib import Path
from voicebench._folder import claim
claim(Path(sys.argv[1]), "judging")
print("held", flush=True)
time.sleep(60)
"""


def test_a_folder_held_by_another_process_is_refused_naming_its_pid(tmp_path: Path):
    folder = tmp_path / "judged"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy) as busy:
            claim(folder, "judging")
        assert f"(pid {holder.pid})" in str(busy.value) and busy.value.exit_code == 2
    finally:
        holder.kill()  # SIGKILL: the system lets go of the lock with the process
        holder.wait()
    lock = claim(folder, "judging")
    assert (folder / ".lock").read_text().strip() == str(os.getpid())
    assert claim(folder, "judging") == lock  # re-entrant within a process
    release(lock)


def test_a_folder_of_another_kind_is_refused(tmp_path: Path):
    run = make_run(tmp_path, "alpha", ITEMS, 900)
    for kind in ("judging", "load", "campaign"):
        with pytest.raises(InputError, match="holds a run folder's output"):
            claim(run, kind)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        claim(tmp_path / "file", "run")


def test_load_refuses_a_run_folder_and_leaves_it_byte_for_byte(tmp_path: Path):
    run = make_run(tmp_path, "alpha", ITEMS, 900)
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    done = subprocess.run(
        voicebench("load", "--agent", "ws://127.0.0.1:9", "--duration", "1", "--out", str(run)),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    errors = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "holds a run folder's output" in errors[0], done.stderr
    after = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".lock"}
    assert after == before


async def test_a_finished_load_folder_is_refused_not_emptied(tmp_path: Path):
    from voicebench.agentspec import AgentSpec, RemoteSpec
    from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest
    from voicebench.live import run_load

    out = tmp_path / "load"
    out.mkdir()
    (out / "turns.jsonl").write_text('{"caller": 0}\n')
    spec = AgentSpec(name="r", family="r", remote=RemoteSpec(url="ws://127.0.0.1:9"))
    with pytest.raises(InputError, match="holds a load of 1 turns already"):
        await run_load(
            spec,
            ITEMS,
            load_manifest(BUILTIN_FIXTURES),
            BUILTIN_FIXTURES,
            out,
            callers=1,
            ramp_s=0,
            duration_s=1,
        )
    assert (out / "turns.jsonl").read_text() == '{"caller": 0}\n'


def _wait_for_lock(folder: Path, pid: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        lock = folder / ".lock"
        if lock.exists() and lock.read_text().strip() == str(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never took the lock ({proc.poll()=})")


def test_a_second_run_on_one_folder_exits_2_and_a_killed_ones_lock_is_free(tmp_path: Path):
    # An agent that accepts the connection and never answers the handshake: a run against it
    # stays in its first turn, holding its folder, until it is stopped.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    spec = tmp_path / "silent.toml"
    spec.write_text(
        'name = "silent"\nfamily = "x"\n[remote]\n'
        f'url = "ws://127.0.0.1:{silent.getsockname()[1]}"\nconnect_timeout_secs = 90\n'
    )
    out = tmp_path / "run"
    command = voicebench("run", "--agent", str(spec), "--limit", "1", "--out", str(out))
    first = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    third = None
    try:
        _wait_for_lock(out, first.pid, first)
        second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        assert f"in use by another voicebench process (pid {first.pid})" in " ".join(
            second.stderr.split()
        )
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        third = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
        _wait_for_lock(out, third.pid, third)
        assert third.poll() is None  # it took the lock and goes on
    finally:
        for proc in (first, third):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        silent.close()


def test_recorded_paths_resolve_inside_their_folder(tmp_path: Path):
    run = tmp_path / "run"
    (run / "audio").mkdir(parents=True)
    (run / "audio" / "ok.wav").write_bytes(b"RIFF")
    (tmp_path / "secret.wav").write_bytes(b"secret")
    (run / "audio" / "link.wav").symlink_to(tmp_path / "secret.wav")
    assert inside(run, "audio/ok.wav") == (run / "audio" / "ok.wav").resolve()
    for bad in ("/etc/passwd", "../secret.wav", "audio/../../secret.wav", "audio/link.wav"):
        with pytest.raises(Outside):
            inside(run, bad)


async def test_a_reply_whose_audio_leads_out_of_its_run_is_text_in_report_and_page(
    tmp_path: Path,
):
    from voicebench.annotate.content import load_library
    from voicebench.reporting.replies import item_replies

    run, judged = judged_against_reference(tmp_path, ITEMS, audio=True)
    (tmp_path / "private.wav").write_bytes((judged / "audio" / f"{ITEMS[0].id}-0.wav").read_bytes())
    lines = []
    for r in read_replies(judged):
        if r.contestant == "alpha":  # an agent's reply, its path recorded as an escape
            r = r.model_copy(update={"run_dir": str(run), "audio_path": "../private.wav"})
        lines.append(r.model_dump_json())
    (judged / "replies.jsonl").write_text("\n".join(lines) + "\n")

    views = item_replies(judged, tmp_path / "report")
    alpha = [v for item in views for v in item.replies if v.contestant == "alpha"]
    human = [v for item in views for v in item.replies if v.contestant == "human/reference"]
    assert all(v.audio is None and "leads out of" in v.audio_refused for v in alpha)
    assert all(v.audio is not None and v.audio_refused is None for v in human)
    copied = sorted(p.read_bytes() for p in (tmp_path / "report" / "audio").iterdir())
    assert b"secret" not in b"".join(copied) and len(copied) == len(human)

    library = load_library(judged)
    assert {key[1] for key in library.refused} == {"alpha"}
    assert {key[1] for key in library.reply_clip} == {"human/reference"}
    assert (tmp_path / "private.wav").resolve() not in set(library.clips.values())


def test_rater_names_that_differ_only_in_case_are_refused(tmp_path: Path):
    from voicebench.annotate import open_rating

    _, judged = judged_against_reference(tmp_path, ITEMS)
    open_rating(judged, "Ann", per_rater=2, seed=1)
    with pytest.raises(InputError, match="differs from the rater 'Ann' only in case"):
        open_rating(judged, "ann", per_rater=2, seed=1)
    open_rating(judged, "Ann", per_rater=2, seed=1)  # the same rater comes back


def test_the_lock_of_a_finished_command_is_released(tmp_path: Path):
    """A library call holds its folder only while it runs (a long-lived process, a notebook,
    can write the folder again, and so can another process)."""
    from voicebench._folder import claimed

    with claimed(tmp_path / "x", "run"):
        pass
    code = "from pathlib import Path; from voicebench._folder import claim; import sys; "
    code += "claim(Path(sys.argv[1]), 'run')"
    assert subprocess.run([sys.executable, "-c", code, str(tmp_path / "x")]).returncode == 0
