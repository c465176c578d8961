"""The versioned run log, the only input of judging, ratings and reports."""

from voicebench.runlog.models import (
    REPLAY_MODES,
    RUNLOG_SCHEMA_VERSION,
    CallRef,
    ReplayMode,
    RunHeader,
    ScenarioOutcome,
    TurnError,
    TurnRecord,
)
from voicebench.runlog.openings import OPENINGS_FILE, append_opening, read_openings
from voicebench.runlog.store import (
    HEADER_FILE,
    TURNS_FILE,
    RunStore,
    default_run_dir,
    folder_stamp,
    header_json,
    parse_header,
    read_header,
    read_turns,
)

__all__ = [
    "HEADER_FILE",
    "OPENINGS_FILE",
    "REPLAY_MODES",
    "RUNLOG_SCHEMA_VERSION",
    "TURNS_FILE",
    "CallRef",
    "ReplayMode",
    "RunHeader",
    "RunStore",
    "ScenarioOutcome",
    "TurnError",
    "TurnRecord",
    "append_opening",
    "default_run_dir",
    "folder_stamp",
    "header_json",
    "parse_header",
    "read_header",
    "read_openings",
    "read_turns",
]
