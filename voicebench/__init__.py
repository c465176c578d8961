"""voicebench: live voice-agent latency and empathy evaluation.

Replay an agent, judge what it said, rate, gate and report, from Python::

    import voicebench

    run = voicebench.replay("scripted", limit=1)        # a shipped spec by name, or a path
    assert run.figures["ttfa_p90_ms"].value < 1200
    assert voicebench.check(run, max_ttfa_p90_ms=1200, max_failed_pct=0)

Data flows one way, one subpackage per stage:
dialogues -> fixtures (audio) -> replay (pipeline + timing) -> runlog -> judging -> ratings
-> reports. ``voicebench.api`` holds the calls below; the command line uses the same library.
Its names are found here when first asked for, so ``import voicebench`` stays quick (it loads
the voice pipeline's libraries only once a call needs them).
"""

import contextlib
import importlib
import os
import warnings
from typing import TYPE_CHECKING, Any

from voicebench._version import __version__ as __version__

# ONNX Runtime (under Silero, Piper and the models that use it) otherwise looks up and sends
# to a telemetry host of its vendor from each process that loads it; voicebench talks to
# nothing but loopback. Read when the library loads, so set here, before anything imports it;
# the helper processes inherit it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

# pipecat's audio helpers import the standard library's audioop, deprecated from Python 3.11 to
# its removal in 3.13 (where pipecat takes audioop-lts instead); every voicebench path into
# the voice pipeline loads them, so the warning would land in a user's test output. voicebench
# does not use audioop (its mu-law is numpy's); it imports it here first, with that warning
# alone ignored, so pipecat's import finds it loaded and warns of nothing.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import audioop  # noqa: F401

if TYPE_CHECKING:
    from voicebench.api import *  # noqa: F403 - the public names, listed once in voicebench.api


def __getattr__(name: str) -> Any:
    api = importlib.import_module("voicebench.api")
    if name == "__all__":
        return ["__version__", *api.__all__]
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'voicebench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
