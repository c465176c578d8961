"""CI gates and run-to-run comparison: ``voicebench check`` and ``voicebench compare``."""

from voicebench.gates.changes import Change, Comparison
from voicebench.gates.check import Gate, GateResult, check, make_gate, read_gates
from voicebench.gates.compare import compare_runs
from voicebench.gates.figures import FIGURE_KEYS, Figure, figures_by_pass, folder_figures

__all__ = [
    "FIGURE_KEYS",
    "Change",
    "Comparison",
    "Figure",
    "Gate",
    "GateResult",
    "check",
    "compare_runs",
    "figures_by_pass",
    "folder_figures",
    "make_gate",
    "read_gates",
]
