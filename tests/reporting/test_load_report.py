"""``voicebench report`` on a load folder: TTFA and failures by concurrency band with the
breaking point and its interval, calls in progress over time, in real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from synthetic_runs import make_load
from typer.testing import CliRunner

from voicebench.cli import app

CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_the_load_report_in_headless_chromium(tmp_path: Path):
    load = make_load(tmp_path / "load")
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["report", str(load), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    bp = summary["breaking_point"]
    # p90 crosses 1,000 ms in the 7-8 band: the interval holds it, within its neighbours.
    assert bp["concurrency"] == 7 and bp["low"] <= 7 <= bp["high"] <= 11
    assert [b["over"] for b in summary["bands"]] == [False] * 3 + [True] * 5
    assert CHROMIUM is not None
    async with Browser(CHROMIUM) as browser:
        await browser.open(out / "index.html")
        facts = json.loads(
            await browser.evaluate(
                """JSON.stringify({
  images: Array.from(document.images).map(i => ({id: i.id, ok: i.complete && i.naturalWidth > 0})),
  bands: document.querySelectorAll('#bands tbody tr').length,
  over: document.querySelectorAll('#bands tbody tr.over').length,
  windows: document.querySelectorAll('#windows tbody tr').length,
  breaking: document.querySelector('#breaking').textContent})"""
            )
        )
        errors = browser.errors()
    assert errors == []
    assert facts["images"] == [
        {"id": "load_concurrency", "ok": True},
        {"id": "load_timeline", "ok": True},
    ]
    assert facts["bands"] == 8 and facts["over"] == 5 and facts["windows"] == 4
    high = bp["high"]
    assert facts["breaking"] == (
        f"Breaking point: from 7 concurrent calls on (95% interval: {bp['low']} to {high})."
    )


def test_a_load_folder_is_reported_on_its_own(tmp_path: Path):
    load = make_load(tmp_path / "load")
    result = CliRunner().invoke(app, ["report", str(load), str(tmp_path)])
    assert result.exit_code == 2 and "reported on its own" in result.output
