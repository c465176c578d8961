"""The simulated seeker over the built-in persona cards: how often it breaks role, how long its
lines are, how long each takes, and how many calls end with a goodbye; per call, the lines
refused for speaking as the supporter and for saying an earlier line again (a column each).

Each card plays one call in text against the agent spec's LLM (the same system prompt and
endpoint as the voice agent; no audio: the seeker's own figures do not depend on it), up to
``--turns`` caller lines, by the rules of ``voicebench converse``: the caller opens with the
item's own first seeker turn, every later line is the seeker's; a line that breaks role is
asked for again and counted, a call with two breaks is invalid, a goodbye ends the call; a
line over the card's word cap is cut to its first sentences (counted) rather than refused.
Seconds per line are wall time per request to the seeker on this machine.

The seeker's prompt was written while looking at the first ten built-in cards, so by default
the figures are of the other twenty (``--start 10``); ``--start 0`` measures all of them.

    python benchmarks/seeker.py                      # the offline seeker, held-out cards
    python benchmarks/seeker.py --start 0 --turns 6 --seeker my-seeker.toml
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench.agentspec import load_agent_spec  # noqa: E402
from voicebench.bootstrap import wilson  # noqa: E402
from voicebench.calling.records import greeting_of, opening_of  # noqa: E402
from voicebench.calling.roles import AS_SUPPORTER, SAID_AGAIN, says_goodbye, spoken  # noqa: E402
from voicebench.calling.seeker import (  # noqa: E402
    MAX_ROLE_BREAKS,
    Seeker,
    SeekerCache,
    load_seeker_spec,
    open_seeker,
)
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues  # noqa: E402
from voicebench.dialogues.personas import personas_for  # noqa: E402
from voicebench.llm.chat import open_chat  # noqa: E402


class TimedClient:
    """A chat client that keeps the wall time of each request."""

    def __init__(self, client) -> None:
        self._client, self.seconds = client, []

    async def ask(self, messages):
        start = time.perf_counter()
        answer = await self._client.ask(messages)
        self.seconds.append(time.perf_counter() - start)
        return answer


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeker", type=Path, default=None, help="Seeker spec (TOML).")
    parser.add_argument("--agent", type=Path, default=ROOT / "agents" / "local.toml")
    parser.add_argument("--start", type=int, default=10, help="Skip the first N cards.")
    parser.add_argument("--limit", type=int, default=None, help="At most N cards.")
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()
    console = Console(stderr=True)

    items = load_dialogues(BUILTIN_DIALOGUES)[args.start :]
    items = items[: args.limit]
    cards = personas_for(items)
    spec = load_seeker_spec(args.seeker)
    agent = load_agent_spec(args.agent)
    assert agent.llm is not None, "the agent spec needs an [llm] table"
    kept_words: list[int] = []
    reasons: Counter[str] = Counter()
    per_call: list[tuple[str, int, str, Counter[str]]] = []
    asked = breaks = invalid = goodbyes = cut = 0
    async with contextlib.AsyncExitStack() as stack:
        clients = await open_seeker(spec, stack)
        timed, again = TimedClient(clients.lines), TimedClient(clients.again)
        agent_llm = await open_chat(agent.llm, stack)
        cache = SeekerCache(Path(tempfile.mkdtemp()) / "cache.jsonl")  # fresh: every line asked
        seeker = Seeker(spec, timed, cache, again=again)
        for n, item in enumerate(items, start=1):
            card, greeting = cards[item.id], greeting_of(item)
            history = [{"role": "system", "content": agent.system_prompt}]
            history.append({"role": "assistant", "content": greeting})
            opening = opening_of(item)
            history.append({"role": "user", "content": opening})
            reply = (await agent_llm.ask(history)).text.strip()
            history.append({"role": "assistant", "content": reply})
            exchanges: list[tuple[str, str]] = [(opening, reply)]
            call_breaks, ended, why_broken = 0, "turns", Counter[str]()
            for _ in range(args.turns - 1):
                line = await seeker.next_line(
                    card, greeting, exchanges, MAX_ROLE_BREAKS - call_breaks
                )
                asked += 1 + len(line.breaks)
                cut += line.cut
                call_breaks += len(line.breaks)
                why_broken.update("too many words" if "words" in r else r for r in line.breaks)
                if call_breaks >= MAX_ROLE_BREAKS:
                    ended = "invalid"
                    break
                said = spoken(line.text)
                if not said:  # the end mark alone: the caller hangs up
                    ended = "goodbye"
                    break
                kept_words.append(len(said.split()))
                history.append({"role": "user", "content": said})
                reply = (await agent_llm.ask(history)).text.strip()
                history.append({"role": "assistant", "content": reply})
                exchanges.append((said, reply))
                if says_goodbye(line.text):
                    ended = "goodbye"
                    break
            breaks += call_breaks
            reasons.update(why_broken)
            per_call.append((item.id, len(exchanges), ended, why_broken))
            invalid += ended == "invalid"
            goodbyes += ended == "goodbye"
            console.print(f"[{n}/{len(items)}] {item.id}: {len(exchanges)} lines, {ended}")

    calls = len(items)
    seconds = timed.seconds + again.seconds
    share = wilson(breaks, asked)
    title = (
        f"seeker {spec.llm.id} over built-in cards {args.start + 1}-{args.start + calls}, "
        f"up to {args.turns} caller lines"
    )
    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("lines asked for", str(asked))
    table.add_row(
        "role-break rate (95% CI)",
        f"{100 * share[0]:.1f}% ({100 * share[1]:.1f}-{100 * share[2]:.1f}%)" if share else "-",
    )
    table.add_row("invalid calls (two breaks)", f"{invalid} of {calls}")
    table.add_row("lines cut to the word cap", str(cut))
    table.add_row(
        "mean words per kept line", f"{statistics.mean(kept_words):.1f}" if kept_words else "-"
    )
    table.add_row(
        "seconds per seeker request (median, p90)",
        f"{statistics.median(seconds):.2f}, {sorted(seconds)[int(0.9 * (len(seconds) - 1))]:.2f}"
        if seconds
        else "-",
    )
    table.add_row(
        "calls ended with a goodbye", f"{goodbyes} of {calls} ({100 * goodbyes / calls:.0f}%)"
    )
    for reason in (AS_SUPPORTER, SAID_AGAIN):
        table.add_row(f"lines refused for {reason}", str(reasons[reason]))
    Console().print(table)
    each = Table(title="each call")
    for column in ("call", "lines", "ended", "role breaks", "as the supporter", "said again"):
        each.add_column(column, justify="left" if column in ("call", "ended") else "right")
    for call_id, lines, ended, why_broken in per_call:
        each.add_row(
            call_id,
            str(lines),
            ended,
            str(sum(why_broken.values())),
            str(why_broken[AS_SUPPORTER]),
            str(why_broken[SAID_AGAIN]),
        )
    Console().print(each)
    why = Table(title="why lines broke role")
    why.add_column("reason")
    why.add_column("lines", justify="right")
    for reason, count in reasons.most_common():
        why.add_row(reason, str(count))
    Console().print(why)


if __name__ == "__main__":
    asyncio.run(main())
