"""The versioned run log, the only input of judging, ratings and reports."""

from voicebench.runlog.models import (
    RUNLOG_SCHEMA_VERSION,
    ReplayMode,
    RunHeader,
    ScenarioOutcome,
    TurnError,
    TurnRecord,
)
from voicebench.runlog.store import (
    HEADER_FILE,
    TURNS_FILE,
    RunStore,
    default_run_dir,
    folder_stamp,
    read_header,
    read_turns,
)
from voicebench.runlog.summary import (
    StageSummary,
    count_kinds,
    kinds_text,
    summarize,
)

__all__ = [
    "HEADER_FILE",
    "RUNLOG_SCHEMA_VERSION",
    "TURNS_FILE",
    "ReplayMode",
    "RunHeader",
    "RunStore",
    "ScenarioOutcome",
    "StageSummary",
    "TurnError",
    "TurnRecord",
    "count_kinds",
    "default_run_dir",
    "folder_stamp",
    "kinds_text",
    "read_header",
    "read_turns",
    "summarize",
]
