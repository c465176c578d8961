"""voicebench from Python: replay an agent, call it with simulated seekers, judge the runs,
rate, check gates, compare, report.

Each call takes paths (or a shipped spec's name) or loaded objects and returns a typed result
that carries data; the command line calls the same library. ``replay`` and ``judge`` have
async forms (``replay_async``, ``judge_async``); their sync forms also work where an event loop
is already running (a notebook), by running the work on a thread with a loop of its own.
"""

from voicebench.api.quality import check, compare, judge, judge_async, judge_check, rate, report
from voicebench.api.results import Calls, EloDifference, GateResults, Judging, Run, run_sync
from voicebench.api.runs import converse, converse_async, replay, replay_async

__all__ = [
    "Calls",
    "EloDifference",
    "GateResults",
    "Judging",
    "Run",
    "check",
    "compare",
    "converse",
    "converse_async",
    "judge",
    "judge_async",
    "judge_check",
    "rate",
    "replay",
    "replay_async",
    "report",
    "run_sync",
]
