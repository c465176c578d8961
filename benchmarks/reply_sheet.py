"""A reading sheet of many agents' written replies: each item's final seeker turn answered by
the local models the offline stack runs, as the agents' LLM would answer it, beside the
human reference, for careful reading (``real_pairs.py build`` then makes gold pairs).

``real_pairs.py sheet`` takes the replies as heard from voice runs, which replay in real time:
on 2 cores a few hundred items by several agents take hours. This asks each model for the
final reply in text through the local llama.cpp server (the voice agents' own server and
prompt, teacher-forced history, their temperature and token limit), so its replies are what
those agents would say before text-to-speech and transcription: the same words, without the
transcription's slips. The contestants:

- ``local-smollm2``, ``local-qwen-0.5b``, ``local-qwen-1.5b``: the shipped agents' models
  with the agents' prompt, temperature 0, 80 tokens;
- ``local-qwen-0.5b-warm``: the 0.5B model at temperature 0.8 (seeded per item);
- ``local-qwen-1.5b-plain``: the 1.5B model told only that it is a helpful assistant, at
  temperature 0.7, 80 tokens;
- ``scripted``: the scripted agent's template;
- ``human/reference``: the item's reference reply.

The sheet is written one item a line as each is done, and a run resumes after the items it
has. ::

    python benchmarks/reply_sheet.py audio_fixtures/dialogues-more.jsonl \
        --out benchmarks/data/more-replies.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.agentspec import HEART_SYSTEM_PROMPT  # noqa: E402
from voicebench.dialogues import Dialogue, load_dialogues  # noqa: E402
from voicebench.judging.replies import REFERENCE  # noqa: E402
from voicebench.llm.local import LlamaServer, resolve_gguf  # noqa: E402
from voicebench.replaying.play import turn_history  # noqa: E402
from voicebench.runlog import ReplayMode  # noqa: E402
from voicebench.testing.scripted_records import supportive_reply  # noqa: E402

PLAIN_PROMPT = "You are a helpful assistant."
MAX_TOKENS = 80

# contestant: (model, system prompt, temperature)
ASKED: dict[str, tuple[str, str, float]] = {
    "local-smollm2": ("smollm2-135m", HEART_SYSTEM_PROMPT, 0.0),
    "local-qwen-0.5b": ("qwen2.5-coder-0.5b", HEART_SYSTEM_PROMPT, 0.0),
    "local-qwen-0.5b-warm": ("qwen2.5-coder-0.5b", HEART_SYSTEM_PROMPT, 0.8),
    "local-qwen-1.5b": ("qwen2.5-coder-1.5b", HEART_SYSTEM_PROMPT, 0.0),
    "local-qwen-1.5b-plain": ("qwen2.5-coder-1.5b", PLAIN_PROMPT, 0.7),
}


def messages(d: Dialogue) -> list[dict[str, str]]:
    """The history before the final seeker turn, as the replay gives it, and that turn."""
    k = d.final_turn_index
    return [
        *turn_history(d, k, ReplayMode.TEACHER_FORCED, {}),
        {"role": "user", "content": d.turns[k].text},
    ]


def seed_of(item: str) -> int:
    return int(hashlib.sha256(item.encode()).hexdigest()[:8], 16)


def ask(base_url: str, system: str, temperature: float, d: Dialogue) -> str:
    body = {
        "model": "local",
        "messages": [{"role": "system", "content": system}, *messages(d)],
        "temperature": temperature,
        "max_tokens": MAX_TOKENS,
        "seed": seed_of(d.id),
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.load(response)
    return " ".join(answer["choices"][0]["message"]["content"].split())


def fill(items: list[Dialogue], done: dict[str, dict], out: Path, log: Callable[[str], None]):
    """Each model's replies to every item, one server per model, written as they come."""
    for model in dict.fromkeys(m for m, _, _ in ASKED.values()):
        asked = {c: a for c, a in ASKED.items() if a[0] == model}
        todo = [d for d in items if any(c not in done[d.id]["replies"] for c in asked)]
        if not todo:
            continue
        log(f"{model}: {len(todo)} items")
        with LlamaServer(resolve_gguf(model), n_threads=os.cpu_count()) as server:
            t0 = time.monotonic()
            for n, d in enumerate(todo, start=1):
                replies = done[d.id]["replies"]
                for contestant, (_, system, temperature) in asked.items():
                    if contestant not in replies:
                        replies[contestant] = ask(server.base_url, system, temperature, d)
                save(items, done, out)
                if n % 10 == 0 or n == len(todo):
                    rate = (time.monotonic() - t0) / n
                    log(f"  {n}/{len(todo)} ({rate:.1f} s an item)")


def row(d: Dialogue) -> dict:
    replies = {REFERENCE: d.reference_reply, "scripted": supportive_reply(messages(d))}
    return {
        "item": d.id,
        "turns": [{"role": t.role.value, "text": t.text} for t in d.turns],
        "replies": replies,
        "notes": {},
        "order": [],
    }


def save(items: list[Dialogue], done: dict[str, dict], out: Path) -> None:
    lines = []
    for d in items:
        r = done[d.id]
        r["replies"] = dict(sorted(r["replies"].items()))
        r["notes"] = {c: r["notes"].get(c, "") for c in r["replies"]}
        lines.append(json.dumps(r, ensure_ascii=False) + "\n")
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dialogues", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    items = load_dialogues(args.dialogues)
    done: dict[str, dict] = {}
    if args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[r["item"]] = r
    for d in items:
        done.setdefault(d.id, row(d))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save(items, done, args.out)
    fill(items, done, args.out, lambda s: print(s, flush=True))
    print(f"{args.out}: {len(items)} items, {len(ASKED) + 2} replies each")


if __name__ == "__main__":
    main()
