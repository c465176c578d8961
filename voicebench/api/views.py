"""What a front end (the command line) shows of the results: the records and figures behind
its tables, and the sentences it shares with the report. Results are data; these are the
types they are made of and the library's words for them, so a front end needs nothing but
``voicebench.api``."""

from voicebench.agentspec import AgentSpec
from voicebench.annotate.server import Rating
from voicebench.bootstrap import TOO_FEW
from voicebench.calling import CallRecord
from voicebench.calling.outcomes import Estimate, call_outcomes
from voicebench.calling.records import ENDINGS, CallProgress
from voicebench.campaign import CampaignHooks, CampaignPlan, Cell
from voicebench.dialogues import Dialogue
from voicebench.dialogues.adversarial import AdversarialPlan, Outcome
from voicebench.gates import Comparison, GateResult
from voicebench.gates.changes import format_value
from voicebench.gates.check import TOO_FEW_EXIT, describe
from voicebench.host import Busy, Host, busy
from voicebench.judging import (
    DIMENSIONS,
    SMOKE_WARNING,
    JudgingResult,
    OwnFamily,
    Verdict,
    own_family_of,
)
from voicebench.judging.cards import (
    TRUSTED_ACCURACY,
    TRUSTED_MARGIN,
    JudgeCard,
    Tally,
    card_of_judging,
)
from voicebench.judging.families import NAMED
from voicebench.judging.gold import DEFAULT_SPLIT
from voicebench.judging.load import LoadQuality
from voicebench.judging.mcnemar import PairedComparison, shown_p
from voicebench.judging.models import DIMENSION_NAMES
from voicebench.judging.trivial import RULE_NAMES
from voicebench.judging.trust import (
    UNMEASURED_RULES,
    card_line,
    family_lines,
    marked,
    points,
    split_text,
    trust_warning,
)
from voicebench.live import LoadSummary, LoadTurn
from voicebench.live.load_summary import Band
from voicebench.metrics import pass_figures, reported_summary, spread, summarize
from voicebench.metrics.models import SoundSummary, StallSummary
from voicebench.metrics.scenarios import OVERLAP_GROUPS, Interval, ScenarioFigures, scenario_figures
from voicebench.metrics.summary import (
    OPENING_ROW,
    PERCENTILES,
    ReportedSummary,
    RunSummary,
    kinds_text,
)
from voicebench.rating import RATINGS_FILE, RatingTable
from voicebench.rating.people import (
    HEART_HUMAN_KAPPA,
    HEART_INTER_HUMAN,
    HEART_JUDGE_HUMAN,
    PeopleSummary,
)
from voicebench.recordings.folder import RecordedCall
from voicebench.replaying import RunProgress
from voicebench.reporting import BuiltReport
from voicebench.reporting.hosts import (
    busy_banners,
    busy_text,
    contrast_lines,
    load_text,
    machine_text,
)
from voicebench.reporting.lines import agreement_lines, share
from voicebench.reporting.load import breaking_point_text, quality_break_text
from voicebench.runlog import TurnRecord, read_header
from voicebench.strategies import ReplyStrategies
from voicebench.strategies.diversity import StrategySummary

__all__ = [
    "DEFAULT_SPLIT",
    "DIMENSIONS",
    "DIMENSION_NAMES",
    "ENDINGS",
    "HEART_HUMAN_KAPPA",
    "HEART_INTER_HUMAN",
    "HEART_JUDGE_HUMAN",
    "NAMED",
    "OPENING_ROW",
    "OVERLAP_GROUPS",
    "PERCENTILES",
    "RATINGS_FILE",
    "RULE_NAMES",
    "SMOKE_WARNING",
    "TOO_FEW",
    "TOO_FEW_EXIT",
    "TRUSTED_ACCURACY",
    "TRUSTED_MARGIN",
    "UNMEASURED_RULES",
    "AdversarialPlan",
    "AgentSpec",
    "Band",
    "BuiltReport",
    "Busy",
    "CallProgress",
    "CallRecord",
    "CampaignHooks",
    "CampaignPlan",
    "Cell",
    "Comparison",
    "Dialogue",
    "Estimate",
    "GateResult",
    "Host",
    "Interval",
    "JudgeCard",
    "JudgingResult",
    "LoadQuality",
    "LoadSummary",
    "LoadTurn",
    "Outcome",
    "OwnFamily",
    "PairedComparison",
    "PeopleSummary",
    "Rating",
    "RatingTable",
    "RecordedCall",
    "ReplyStrategies",
    "ReportedSummary",
    "RunProgress",
    "RunSummary",
    "ScenarioFigures",
    "SoundSummary",
    "StallSummary",
    "StrategySummary",
    "Tally",
    "TurnRecord",
    "Verdict",
    "agreement_lines",
    "breaking_point_text",
    "busy",
    "busy_banners",
    "busy_text",
    "call_outcomes",
    "card_line",
    "card_of_judging",
    "contrast_lines",
    "describe",
    "family_lines",
    "format_value",
    "kinds_text",
    "load_text",
    "machine_text",
    "marked",
    "own_family_of",
    "pass_figures",
    "points",
    "quality_break_text",
    "read_header",
    "reported_summary",
    "scenario_figures",
    "share",
    "shown_p",
    "split_text",
    "spread",
    "summarize",
    "trust_warning",
]
