"""Ratings over verdicts: strength-weighted Bradley-Terry, Elo, intervals, latency views."""

from voicebench.rating.bt import (
    DEFAULT_PRIOR,
    ELO_BASE,
    ELO_SCALE,
    asymptotic_half_width,
    bootstrap_elo,
    fit,
    to_elo,
    win_matrices,
)
from voicebench.rating.contextual import ContextualFit, fit_contextual
from voicebench.rating.people import (
    HEART_HUMAN_KAPPA,
    HEART_INTER_HUMAN,
    HEART_JUDGE_HUMAN,
    HUMAN_DIR,
    PeopleSummary,
    folder_judgments,
    people_summary,
)
from voicebench.rating.table import (
    RATINGS_FILE,
    ContestantRating,
    RatingTable,
    current_ratings,
    inputs_sha256,
    rate_judging,
)
from voicebench.rating.wins import NothingToRateError, elo_difference

__all__ = [
    "DEFAULT_PRIOR",
    "ELO_BASE",
    "ELO_SCALE",
    "HEART_HUMAN_KAPPA",
    "HEART_INTER_HUMAN",
    "HEART_JUDGE_HUMAN",
    "HUMAN_DIR",
    "RATINGS_FILE",
    "ContestantRating",
    "ContextualFit",
    "NothingToRateError",
    "PeopleSummary",
    "RatingTable",
    "asymptotic_half_width",
    "bootstrap_elo",
    "current_ratings",
    "elo_difference",
    "fit",
    "fit_contextual",
    "folder_judgments",
    "inputs_sha256",
    "people_summary",
    "rate_judging",
    "to_elo",
    "win_matrices",
]
