"""Pairwise HEART judging of what the listener heard."""

import asyncio as _asyncio

from voicebench.judging import builtin_methods as _builtin_methods  # noqa: F401 (registers them)
from voicebench.judging.cards import SMOKE_WARNING
from voicebench.judging.combine import (
    JudgeHealth,
    combine_judges,
    combine_orders,
    judge_health,
    pair_results,
)
from voicebench.judging.families import OwnFamily, own_family_of
from voicebench.judging.models import (
    DIMENSION_NAMES,
    DIMENSIONS,
    HUMAN_FAMILY,
    ContestantKind,
    DimensionMarks,
    JudgeAnswer,
    JudgingHeader,
    PairResult,
    Reply,
    Verdict,
)
from voicebench.judging.prompt import (
    AnswerError,
    answer_schema,
    judge_messages,
    parse_answer,
)
from voicebench.judging.run import JudgingResult, judge_runs
from voicebench.judging.spec import JudgeModelSpec, JudgeSpec, load_judge_spec
from voicebench.judging.store import (
    HEADER_FILE,
    PAIRS_FILE,
    REPLIES_FILE,
    VERDICTS_FILE,
    JudgingStore,
    current_verdicts,
    default_out_dir,
    judged_items,
    judged_runs,
    read_judging_header,
    read_replies,
    read_verdicts,
)


def run_judging(*args, **kwargs) -> JudgingResult:
    """``judge_runs`` from synchronous code."""
    return _asyncio.run(judge_runs(*args, **kwargs))


__all__ = [
    "DIMENSIONS",
    "DIMENSION_NAMES",
    "HEADER_FILE",
    "HUMAN_FAMILY",
    "PAIRS_FILE",
    "REPLIES_FILE",
    "SMOKE_WARNING",
    "VERDICTS_FILE",
    "AnswerError",
    "ContestantKind",
    "DimensionMarks",
    "JudgeAnswer",
    "JudgeHealth",
    "JudgeModelSpec",
    "JudgeSpec",
    "JudgingHeader",
    "JudgingResult",
    "JudgingStore",
    "OwnFamily",
    "PairResult",
    "Reply",
    "Verdict",
    "answer_schema",
    "combine_judges",
    "combine_orders",
    "current_verdicts",
    "default_out_dir",
    "judge_health",
    "judge_messages",
    "judge_runs",
    "judged_items",
    "judged_runs",
    "load_judge_spec",
    "own_family_of",
    "pair_results",
    "parse_answer",
    "read_judging_header",
    "read_replies",
    "read_verdicts",
    "run_judging",
]
