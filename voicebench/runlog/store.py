"""Reading and writing run directories; appends survive a kill at any moment.

Each turn record is one JSON line, written with a single ``write`` of the whole line and
flushed and fsynced before the next turn starts. A line cut short by a kill has no newline;
opening the run again drops it, so the turn is simply redone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voicebench._jsonl import (
    append_record,
    drop_partial_line,
    read_models,
    write_atomic,
)
from voicebench._model import parse_json, read_utf8, validate_record
from voicebench.errors import InputError, RunError
from voicebench.host import Host
from voicebench.runlog.models import RunHeader, TurnRecord

HEADER_FILE = "run.json"
TURNS_FILE = "turns.jsonl"


def folder_stamp() -> str:
    """Now (UTC), as the suffix of a default output folder: ``20261124-093000``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def default_run_dir(name: str, prefix: str = "") -> Path:
    """``reports/runs/PREFIXNAME-TIMESTAMP``, the name made safe for a folder."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    return Path("reports") / "runs" / f"{prefix}{slug}-{folder_stamp()}"


def read_header(run_dir: str | Path) -> RunHeader:
    path = Path(run_dir) / HEADER_FILE
    if not path.is_file():
        raise InputError("not a run directory (no run.json)", file=Path(run_dir))
    return parse_header(read_utf8(path), file=path)


def parse_header(text: str | bytes, *, file: Path) -> RunHeader:
    """A ``run.json``'s text as a header (an older version brought up to date); errors name
    ``file``."""
    return validate_record(RunHeader, _migrate_header(parse_json(text, file=file)), file=file)


def header_json(header: RunHeader) -> str:
    """``run.json``'s text: the one way a run header is written."""
    return header.model_dump_json(indent=2) + "\n"


def _migrate_header(data: Any) -> Any:
    """Before schema 3 Piper's lead-in was never trimmed; say so where the spec is silent."""
    if not isinstance(data, dict):
        return data  # refused, naming the file, when it is validated
    tts = data.get("agent", {}).get("tts") if isinstance(data.get("agent"), dict) else None
    version = data.get("schema_version")
    old = isinstance(version, int) and version < 3
    if old and isinstance(tts, dict) and "trim_lead" not in tts:
        data = {**data, "agent": {**data["agent"], "tts": {**tts, "trim_lead": False}}}
    return data


def read_turns(run_dir: str | Path) -> list[TurnRecord]:
    """All complete turn records; a trailing partial line (a killed write) is ignored."""
    path = Path(run_dir) / TURNS_FILE
    return read_models(path, TurnRecord)


class RunStore:
    """An open run directory: header written once, turn records appended. With ``host`` (the
    machine this sitting measures on, with its load so far), the header's ``hosts`` gain this
    sitting's entry when its first turn is appended, rewritten after each later one and when
    the store is closed."""

    def __init__(self, run_dir: str | Path, *, host: Callable[[], Host] | None = None) -> None:
        self.dir = Path(run_dir)
        self.audio_dir = self.dir / "audio"
        self._host = host
        self._header: RunHeader | None = None
        self._appended = 0

    def open(self, header: RunHeader) -> list[TurnRecord]:
        """Create the run, or reopen a compatible one; returns the turns already finished."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.audio_dir.mkdir(exist_ok=True)
        header_path = self.dir / HEADER_FILE
        if header_path.exists():
            existing = read_header(self.dir)
            _check_resumable(existing, header, header_path)
            drop_partial_line(self.dir / TURNS_FILE)
            self._header = existing
            return read_turns(self.dir)
        write_atomic(header_path, header_json(header))
        self._header = header
        return []

    def append(self, record: TurnRecord) -> None:
        """Append one finished turn durably."""
        append_record(self.dir / TURNS_FILE, record)
        self._appended += 1
        self._write_host()

    def close(self) -> None:
        """Write this sitting's host a last time (if it finished a turn)."""
        self._write_host()

    def _write_host(self) -> None:
        if self._host is None or self._header is None or not self._appended:
            return
        header = self._header.model_copy(update={"hosts": (*self._header.hosts, self._host())})
        write_atomic(self.dir / HEADER_FILE, header_json(header))


def _check_resumable(existing: RunHeader, new: RunHeader, path: Path) -> None:
    fields = ("agent", "dialogues_sha256", "dialogue_ids", "mode", "turn_timeout_s")
    for field in (*fields, "scenarios", "seed", "final_only", "repeats"):
        if getattr(existing, field) != getattr(new, field):
            raise RunError(
                f"{path}: {field} differs from the run being resumed; "
                "use a new --out directory for a different run"
            )
