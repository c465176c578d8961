"""voicebench: live voice-agent latency and empathy evaluation.

Data flows one way, one subpackage per stage:
dialogues -> fixtures (audio) -> replay (pipeline + timing) -> runlog -> judging -> ratings
-> reports.
"""

__version__ = "0.1.0"
