"""The report names only the stages some turn has, in its waterfall and in its method's list
of stages: a cascade's report has no speech-to-speech model's first audio."""

from __future__ import annotations

import re
from pathlib import Path

from synthetic_runs import make_run

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.reporting import build_report


def table_rows(page: str, key: str) -> list[str]:
    """The first cell of each body row of the table ``key``."""
    table = re.search(rf'<table[^>]* id="{key}"[^>]*>(.*?)</table>', page, re.S)
    assert table is not None, key
    body = table.group(1).split("<tbody>")[1]
    return re.findall(r"<tr><td[^>]*>([^<]*)</td>", body)


def test_a_cascade_s_report_leaves_out_the_stages_it_has_not(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    run = make_run(tmp_path, "fast", items, [900, 1100])
    built = build_report([run], tmp_path / "report")
    page = (built.out_dir / "index.html").read_text()
    stages = table_rows(page, "stages")
    assert stages == [
        "endpointing",
        "ASR",
        "turn end",
        "LLM TTFT",
        "text aggregation",
        "TTS first audio",
        "output",
    ]
    markdown = (built.out_dir / "report.md").read_text()
    assert "model first audio" not in page and "model first audio" not in markdown
    waterfall = re.search(r'id="waterfall"[^>]*>.*?</thead>', page, re.S)
    assert waterfall is not None and "audio hold" not in waterfall.group(0)
