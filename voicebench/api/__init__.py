"""voicebench from Python: replay an agent, call it with simulated seekers, judge the runs,
rate, check gates, compare, report; and the rest of what the command line does (campaigns,
the demo, load, serving, dialogue sets, people rating by ear).

Each call takes paths (or a shipped spec's name) or loaded objects and returns a typed result
that carries data; the command line is a thin layer over these calls. ``replay`` and ``judge``
have async forms (``replay_async``, ``judge_async``); their sync forms also work where an event
loop is already running (a notebook), by running the work on a thread with a loop of its own.
"""

import lazy_loader

# The names and their modules are listed once, in __init__.pyi: a name's module (and the
# libraries it needs: the voice pipeline, the judge) is loaded when the name is first used.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
