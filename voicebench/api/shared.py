"""What every call and front end shares, light to load: the budgets and timeouts, the errors
voicebench raises on purpose, and the specs and sets voicebench ships."""

from voicebench._version import __version__
from voicebench.budgets import LOAD_TURN_TIMEOUT_S, TTFA_BUDGET_MS, TTFT_BUDGET_MS, TURN_TIMEOUT_S
from voicebench.builtin import (
    DEFAULT_AGENT,
    DIALOGUE_SETS,
    DIALOGUES,
    FIXTURES,
    OFFLINE_JUDGE,
    PAIRS_GOLD,
    SECOND_AGENT,
    SMOKE_JUDGE,
    dialogue_set,
    first_use_fixtures,
    shipped,
    shipped_hint,
    shipped_name,
    spec_path,
)
from voicebench.errors import (
    InputError,
    MissingFileError,
    SecretDestinationWarning,
    VoicebenchError,
)
from voicebench.remotespec import SIP_SCHEMES

__all__ = [
    "DEFAULT_AGENT",
    "DIALOGUES",
    "DIALOGUE_SETS",
    "FIXTURES",
    "LOAD_TURN_TIMEOUT_S",
    "OFFLINE_JUDGE",
    "PAIRS_GOLD",
    "SECOND_AGENT",
    "SIP_SCHEMES",
    "SMOKE_JUDGE",
    "TTFA_BUDGET_MS",
    "TTFT_BUDGET_MS",
    "TURN_TIMEOUT_S",
    "InputError",
    "MissingFileError",
    "SecretDestinationWarning",
    "VoicebenchError",
    "__version__",
    "dialogue_set",
    "first_use_fixtures",
    "shipped",
    "shipped_hint",
    "shipped_name",
    "spec_path",
]
