"""The public names of ``voicebench.api``, each with the module it is loaded from when first
used (``voicebench.api`` reads them from here at run time; type checkers read them too)."""

from . import shared, views  # noqa: F401 - submodules: voicebench.api.views, .shared
from .campaigns import demo_plan, plan_campaign, run_campaign, run_demo
from .dialogues import (
    adversarial,
    adversarial_plan,
    import_esconv,
    read_dialogues,
    rejected_file,
    synth,
)
from .gates import (
    check,
    check_gates,
    compare,
    gate,
    gates_file,
    parse_gate,
    write_junit,
    write_summary,
)
from .live import Load, Serving, load, serve
from .quality import (
    JudgeCheck,
    judge,
    judge_async,
    judge_card,
    judge_check,
    judging_folder,
    label_strategies,
    rate,
    rating_session,
    serve_rating_page,
    strategies_file,
)
from .recordings import analyze_recordings
from .reports import is_load, load_quality, load_report, report
from .results import Calls, EloDifference, GateResults, Judging, Run, run_sync
from .runs import converse, converse_async, replay, replay_async, run_folder
from .shared import (
    LOAD_TURN_TIMEOUT_S,
    TTFA_BUDGET_MS,
    TTFT_BUDGET_MS,
    TURN_TIMEOUT_S,
    InputError,
    MissingFileError,
    VoicebenchError,
)

__all__ = [
    "LOAD_TURN_TIMEOUT_S",
    "TTFA_BUDGET_MS",
    "TTFT_BUDGET_MS",
    "TURN_TIMEOUT_S",
    "Calls",
    "EloDifference",
    "GateResults",
    "InputError",
    "JudgeCheck",
    "Judging",
    "Load",
    "MissingFileError",
    "Run",
    "Serving",
    "VoicebenchError",
    "adversarial",
    "adversarial_plan",
    "analyze_recordings",
    "check",
    "check_gates",
    "compare",
    "converse",
    "converse_async",
    "demo_plan",
    "gate",
    "gates_file",
    "import_esconv",
    "is_load",
    "judge",
    "judge_async",
    "judge_card",
    "judge_check",
    "judging_folder",
    "label_strategies",
    "load",
    "load_quality",
    "load_report",
    "parse_gate",
    "plan_campaign",
    "rate",
    "rating_session",
    "read_dialogues",
    "rejected_file",
    "replay",
    "replay_async",
    "report",
    "run_campaign",
    "run_demo",
    "run_folder",
    "run_sync",
    "serve",
    "serve_rating_page",
    "strategies_file",
    "synth",
    "write_junit",
    "write_summary",
]
