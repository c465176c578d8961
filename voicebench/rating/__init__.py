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
from voicebench.rating.display import agreement_lines, latency_board, latency_line, leaderboard
from voicebench.rating.table import (
    RATINGS_FILE,
    ContestantRating,
    NothingToRateError,
    RatingTable,
    current_ratings,
    inputs_sha256,
    rate_judging,
)

__all__ = [
    "DEFAULT_PRIOR",
    "ELO_BASE",
    "ELO_SCALE",
    "RATINGS_FILE",
    "ContestantRating",
    "ContextualFit",
    "NothingToRateError",
    "RatingTable",
    "agreement_lines",
    "asymptotic_half_width",
    "bootstrap_elo",
    "current_ratings",
    "fit",
    "fit_contextual",
    "inputs_sha256",
    "latency_board",
    "latency_line",
    "leaderboard",
    "rate_judging",
    "to_elo",
    "win_matrices",
]
