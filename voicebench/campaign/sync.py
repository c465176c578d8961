"""Bringing a run folder's files from the machine that runs a cell to the campaign folder, as
they are written, so that a worker lost mid-cell has lost nothing it finished.

A ``FolderSync`` on the worker reports what changed in its folder since it last reported:
of an append-only ``.jsonl`` file, the complete lines added since (a line still being written
waits for the next report); of any other file (``run.json``, a turn's audio, a call's
recording), the whole file when its size or modification time changed. ``apply`` writes such
changes into the campaign folder; ``snapshot`` is the whole folder, to seed a worker that
resumes the cell.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from voicebench._folder import Outside, inside
from voicebench._jsonl import write_atomic
from voicebench.errors import RunError


@dataclass(frozen=True)
class FileChange:
    path: str
    """Relative to the run folder, with ``/`` separators."""
    data: bytes
    offset: int | None = None
    """Where ``data`` goes in an append-only file; None: it is the whole file."""


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


class FolderSync:
    """What changed in ``folder`` since the last ``changes()`` (or since ``seeded``)."""

    def __init__(self, folder: Path, seeded: Iterable[FileChange] = ()) -> None:
        self.folder = folder
        self.sent: dict[str, tuple[int, int]] = {}
        """Per file: (bytes sent of an append-only file, or its size; its mtime_ns)."""
        for c in seeded:
            p = folder / c.path
            self.sent[c.path] = (len(c.data) + (c.offset or 0), p.stat().st_mtime_ns)

    def changes(self) -> list[FileChange]:
        out = []
        for p in _files(self.folder):
            rel = p.relative_to(self.folder).as_posix()
            stat = p.stat()
            seen = self.sent.get(rel)
            if p.suffix == ".jsonl":
                start = seen[0] if seen else 0
                with p.open("rb") as fh:
                    fh.seek(start)
                    tail = fh.read()
                complete = tail[: tail.rfind(b"\n") + 1]
                if complete:
                    out.append(FileChange(rel, complete, offset=start))
                    self.sent[rel] = (start + len(complete), stat.st_mtime_ns)
            elif seen != (stat.st_size, stat.st_mtime_ns):
                out.append(FileChange(rel, p.read_bytes()))
                self.sent[rel] = (stat.st_size, stat.st_mtime_ns)
        return out


RUN_FILES = re.compile(
    r"run\.json|turns\.jsonl|(audio|calls)/[A-Za-z0-9_][A-Za-z0-9._-]{0,200}\.wav"
)
"""The files of a run folder a worker may send: its header, its turns, their audio and its
calls' recordings."""


def _target(folder: Path, change: FileChange) -> Path:
    """Where ``change`` goes in ``folder``; a path a run folder does not have, or one that
    would lead out of it, is refused (a worker's message is not trusted to name files)."""
    if not RUN_FILES.fullmatch(change.path):
        raise RunError(
            f"{folder}: a worker sent a file a run folder does not have: {change.path!r}"
        )
    try:
        path = inside(folder, change.path)
        if (folder / change.path).is_symlink():
            raise Outside(change.path)  # links are not written through, wherever they lead
        return path
    except Outside:
        raise RunError(
            f"{folder}: a worker sent a file outside the cell's folder: {change.path!r}"
        ) from None


def apply(folder: Path, changes: Iterable[FileChange]) -> None:
    """Write ``changes`` into ``folder``; an append lands at its offset, durably. Only a run
    folder's own files are written (``RUN_FILES``), and an append never starts past the end of
    what is there."""
    for c in changes:
        path = _target(folder, c)
        path.parent.mkdir(parents=True, exist_ok=True)
        if c.offset is None:
            write_atomic(path, c.data)
            continue
        size = path.stat().st_size if path.exists() else 0
        if not 0 <= c.offset <= size:
            raise RunError(
                f"{path}: a worker's append starts at byte {c.offset}, past the end ({size})"
            )
        with path.open("r+b" if path.exists() else "wb") as fh:
            fh.truncate(c.offset)
            fh.seek(c.offset)
            fh.write(c.data)
            fh.flush()
            os.fsync(fh.fileno())


def snapshot(folder: Path) -> list[FileChange]:
    """Every file of ``folder`` (its append-only files up to their last complete line)."""
    if not folder.is_dir():
        return []
    out = []
    for p in _files(folder):
        data = p.read_bytes()
        if p.suffix == ".jsonl":
            out.append(
                FileChange(p.relative_to(folder).as_posix(), data[: data.rfind(b"\n") + 1], 0)
            )
        else:
            out.append(FileChange(p.relative_to(folder).as_posix(), data))
    return out
