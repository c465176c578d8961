"""Wide tables stay inside the page's box: a table scrolls inside its own box, its headers
wrap between words, and its caption is set below that box at the box's width (inside a
scrolling table it ran past the box, cut off). In headless Chromium where it is installed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from chromium import Browser, find_chromium

from voicebench.reporting import build_report

CHROMIUM = find_chromium()
FIT = """JSON.stringify((() => {
  const main = document.querySelector('main'), style = getComputedStyle(main);
  const right = main.getBoundingClientRect().right - parseFloat(style.paddingRight);
  const board = document.getElementById('leaderboard'), box = board.closest('.scroll');
  const caption = board.caption || box.nextElementSibling;
  return {right: right, box: box.getBoundingClientRect().right,
          scrolls: box.scrollWidth > box.clientWidth,
          caption: caption.textContent, captionRight: caption.getBoundingClientRect().right,
          overflow: getComputedStyle(box).overflowX};
})())"""


def test_every_table_sits_in_a_scrolling_box_with_its_caption_below(judged: Path, tmp_path: Path):
    page = (build_report([judged], tmp_path / "report").out_dir / "index.html").read_text()
    css = re.search(r"<style>(.*?)</style>", page, re.S)
    assert css is not None and re.search(r"\.scroll\{overflow-x:auto[;}]", css.group(1))
    tables = re.findall(r'<div class="scroll"><table class="sortable" id="([^"]+)"', page)
    assert "leaderboard" in tables and len(tables) == page.count('<table class="sortable"')
    assert "<caption>" not in page
    caption = re.search(
        r'id="leaderboard" aria-describedby="leaderboard-caption">.*?</table></div>'
        r'<p class="caption" id="leaderboard-caption">([^<]+)</p>',
        page,
        re.S,
    )
    assert caption is not None and caption.group(1).startswith("Strength-weighted Bradley-Terry")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 800])
async def test_the_leaderboard_stays_inside_the_page(judged: Path, tmp_path: Path, width: int):
    out = build_report([judged], tmp_path / "report").out_dir
    async with Browser(CHROMIUM, width=width, height=1200) as browser:
        await browser.open(out / "index.html")
        fit = json.loads(await browser.evaluate(FIT))
        errors = browser.errors()
    assert errors == []
    assert fit["overflow"] == "auto" and fit["box"] <= fit["right"] + 1
    assert fit["caption"].startswith("Strength-weighted Bradley-Terry")
    assert fit["captionRight"] <= fit["right"] + 1, fit  # read whole, never scrolled to
    if width >= 1280:
        assert not fit["scrolls"], fit  # the whole leaderboard in view on a laptop's screen
