"""voicebench: live voice-agent latency and empathy evaluation.

Replay an agent, judge what it said, rate, gate and report, from Python::

    import voicebench

    run = voicebench.replay("scripted", limit=1)        # a shipped spec by name, or a path
    assert run.figures["ttfa_p90_ms"].value < 1200
    assert voicebench.check(run, max_ttfa_p90_ms=1200, max_failed_pct=0)

Data flows one way, one subpackage per stage:
dialogues -> fixtures (audio) -> replay (pipeline + timing) -> runlog -> judging -> ratings
-> reports. ``voicebench.api`` holds the calls below; the command line uses the same library.
"""

from voicebench import api
from voicebench._version import __version__
from voicebench.api import *  # noqa: F403 - the public names, listed once in voicebench.api

__all__ = ["__version__", *api.__all__]
