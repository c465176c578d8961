"""Output folders with one writer each, and one kind of output each.

Every command that writes a folder (``run``, ``judge``, ``campaign``, ``load``, ``annotate``
for its rater) first claims it:

- A folder that already holds another kind of output (its marker file below) is refused with
  one line, so ``load --out RUN_DIR`` cannot empty a run's ``turns.jsonl``.
- The claim takes an advisory lock (``flock``) on ``FOLDER/.lock`` (or ``.NAME.lock``),
  written with the holder's pid. The lock belongs to the open file, so the operating system
  lets go of it when the process ends in any way, SIGKILL included: a folder is never left
  locked by a process that is gone. A second process gets ``FolderBusy`` naming the pid, which
  the CLI prints as one line with exit code 2.

Within one process a claim is re-entrant (a campaign replays into folders it also judges). A
claim lasts until ``release`` or the end of the process. Where ``fcntl`` does not exist
(Windows) folders are not locked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from voicebench.errors import InputError, VoicebenchError

MARKERS = {
    "run.json": "run",
    "judging.json": "judging",
    "load.json": "load",
    "campaign.json": "campaign",
    "report.json": "report",
}
"""A file that says what kind of output a folder holds."""

_held: dict[Path, int] = {}
"""Lock files this process holds, by resolved path, with their open descriptors."""


class FolderBusy(VoicebenchError):
    """Another process is writing the folder."""

    exit_code = 2

    def __init__(self, folder: Path, pid: str) -> None:
        self.folder = folder
        self.pid = pid
        super().__init__(
            f"{folder}: in use by another voicebench process (pid {pid or 'unknown'}); "
            "wait for it to finish or stop it, or choose another folder"
        )


class Outside(ValueError):
    """A recorded path that leads out of the folder it belongs to."""


def inside(folder: Path, recorded: str) -> Path:
    """``recorded`` (a path a file names) inside ``folder``, with every link followed;
    ``Outside`` when it is absolute or leads out of the folder, through ``..`` or a link."""
    if Path(recorded).is_absolute():
        raise Outside(f"{recorded!r} is an absolute path, not one inside {folder}")
    base = folder.resolve()
    path = (base / recorded).resolve()
    if not path.is_relative_to(base):
        raise Outside(f"{recorded!r} leads out of {folder}")
    return path


def folder_kind(folder: Path) -> str | None:
    """The kind of output ``folder`` holds, from its marker file; None when it holds none."""
    for name, kind in MARKERS.items():
        if (folder / name).is_file():
            return kind
    return None


def check_kind(folder: Path, kind: str) -> None:
    """Refuse ``folder`` when it holds output of another kind than ``kind``."""
    if folder.exists() and not folder.is_dir():
        raise InputError("not a folder", file=folder)
    held = folder_kind(folder) if folder.is_dir() else None
    if held is not None and held != kind:
        raise InputError(
            f"holds a {held} folder's output; a {kind} writes a folder of its own: "
            "choose another one",
            file=folder,
        )


def _lock_path(folder: Path, name: str = "") -> Path:
    return (folder / (f".{name}.lock" if name else ".lock")).resolve()


def lock(folder: Path, name: str = "") -> Path:
    """Take ``folder``'s lock (``.lock``, or ``.NAME.lock`` for one of several writers that
    share the folder) for this process; ``FolderBusy`` when another process holds it. Returns
    the lock file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = _lock_path(folder, name)
    if path in _held:
        return path
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here
        return path
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise FolderBusy(folder, pid) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    _held[path] = fd
    return path


def claim(folder: Path, kind: str) -> Path:
    """Check that ``folder`` holds nothing of another kind, then lock it (see the module
    docstring); returns the lock file's path."""
    check_kind(folder, kind)
    return lock(folder)


def release(lock_path: Path) -> None:
    """Let go of a lock this process holds (a no-op for one it does not)."""
    fd = _held.pop(lock_path, None)
    if fd is not None:
        os.close(fd)  # closing the file releases the flock


@contextlib.contextmanager
def claimed(folder: Path, kind: str) -> Iterator[Path]:
    """``claim`` for the length of a block; a claim the process already held stays held."""
    already = _lock_path(folder) in _held
    path = claim(folder, kind)
    try:
        yield path
    finally:
        if not already:
            release(path)
