"""Dialogue items (built-in set, ESConv import)."""

from voicebench.dialogues.esconv import import_esconv, import_esconv_to_file
from voicebench.dialogues.io import BUILTIN_DIALOGUES, load_dialogues, save_dialogues
from voicebench.dialogues.models import Dialogue, EscalationProfile, Role, Turn

__all__ = [
    "BUILTIN_DIALOGUES",
    "Dialogue",
    "EscalationProfile",
    "Role",
    "Turn",
    "import_esconv",
    "import_esconv_to_file",
    "load_dialogues",
    "save_dialogues",
]
