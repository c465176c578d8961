"""A run folder's files travel from a worker to the campaign folder as they are written: the
complete lines added to a log, whole files that changed, and nothing twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from voicebench.campaign.sync import FileChange, FolderSync, apply, snapshot
from voicebench.errors import RunError


def test_new_lines_and_changed_files_arrive_once_and_a_half_line_waits(tmp_path: Path):
    worker, here = tmp_path / "worker", tmp_path / "here"
    (worker / "audio").mkdir(parents=True)
    (worker / "run.json").write_text("{}\n")
    (worker / "turns.jsonl").write_bytes(b'{"n": 1}\n{"n": 2')  # the second line half-written
    (worker / "audio" / "a.wav").write_bytes(b"RIFF1")
    sync = FolderSync(worker)
    first = sync.changes()
    assert {c.path for c in first} == {"run.json", "turns.jsonl", "audio/a.wav"}
    apply(here, first)
    assert (here / "turns.jsonl").read_bytes() == b'{"n": 1}\n'
    assert sync.changes() == []  # nothing new

    with (worker / "turns.jsonl").open("ab") as fh:
        fh.write(b'}\n{"n": 3}\n')
    (worker / "audio" / "b.wav").write_bytes(b"RIFF2")
    (worker / "calls").mkdir()
    (worker / "calls" / "d.wav").write_bytes(b"RIFF3")  # the dialogue's recording
    second = sync.changes()
    log = next(c for c in second if c.path == "turns.jsonl")
    assert log.offset == len(b'{"n": 1}\n') and log.data == b'{"n": 2}\n{"n": 3}\n'
    assert {c.path for c in second} == {"turns.jsonl", "audio/b.wav", "calls/d.wav"}
    apply(here, second)
    assert (here / "turns.jsonl").read_bytes() == b'{"n": 1}\n{"n": 2}\n{"n": 3}\n'
    assert (here / "audio" / "b.wav").read_bytes() == b"RIFF2"
    assert (here / "calls" / "d.wav").read_bytes() == b"RIFF3"


def test_a_resumed_worker_is_seeded_with_the_folder_and_sends_only_what_is_new(tmp_path: Path):
    here, worker = tmp_path / "here", tmp_path / "worker"
    (here / "audio").mkdir(parents=True)
    (here / "run.json").write_text("{}\n")
    (here / "turns.jsonl").write_bytes(b'{"n": 1}\n')
    (here / "audio" / "a.wav").write_bytes(b"RIFF1")
    seed = snapshot(here)
    apply(worker, seed)
    sync = FolderSync(worker, seed)
    assert sync.changes() == []
    # The worker goes on: a line a replayed turn appends lands after the seed's, once.
    with (worker / "turns.jsonl").open("ab") as fh:
        fh.write(b'{"n": 2}\n')
    apply(here, sync.changes())
    assert (here / "turns.jsonl").read_bytes() == b'{"n": 1}\n{"n": 2}\n'
    assert snapshot(tmp_path / "none") == []


@pytest.mark.parametrize(
    "path",
    [
        "/tmp/evil.wav",
        "../evil.jsonl",
        "audio/../../evil.wav",
        "cells/other/turns.jsonl",
        "audio/.hidden.wav",
        "run.json/../x",
        "notes.txt",
        "audio/sub/a.wav",
        "calls/../../evil.wav",
        "calls/sub/d.wav",
    ],
)
def test_a_worker_cannot_name_a_file_outside_the_run_folders_own(tmp_path: Path, path: str):
    here = tmp_path / "cells" / "c"
    here.mkdir(parents=True)
    with pytest.raises(RunError, match="a worker sent a file"):
        apply(here, [FileChange(path, b"x"), FileChange("turns.jsonl", b"{}\n", offset=0)])
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []


def test_a_worker_cannot_write_through_a_link_or_past_the_end(tmp_path: Path):
    here = tmp_path / "c"
    (here / "audio").mkdir(parents=True)
    (tmp_path / "outside.wav").write_bytes(b"keep")
    (here / "audio" / "a.wav").symlink_to(tmp_path / "outside.wav")
    with pytest.raises(RunError, match="outside the cell's folder"):
        apply(here, [FileChange("audio/a.wav", b"RIFF")])
    assert (tmp_path / "outside.wav").read_bytes() == b"keep"
    apply(here, [FileChange("turns.jsonl", b'{"n": 1}\n', offset=0)])
    with pytest.raises(RunError, match="past the end"):
        apply(here, [FileChange("turns.jsonl", b'{"n": 2}\n', offset=1000)])
    assert (here / "turns.jsonl").read_bytes() == b'{"n": 1}\n'  # no NULs padded in
