"""The rating page's server: blinding, safety, durable answers and resuming after a kill."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from page_fixtures import CONTESTANTS
from processes import voicebench

from voicebench.annotate import draw_plan, judged_pairs, open_rating, rater_plan, repeats_for
from voicebench.judging import read_replies
from voicebench.rating import folder_judgments


async def http(
    base: str,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> tuple[int, dict[str, str], bytes]:
    """One request with the path sent exactly as given (no client normalizes it)."""
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body:
        head.append(f"Content-Length: {len(body)}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    top, _, payload = raw.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields: dict[str, str] = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        key = k.strip().lower()  # repeated headers (Set-Cookie) joined by newlines
        fields[key] = f"{fields[key]}\n{v.strip()}" if key in fields else v.strip()
    if fields.get("transfer-encoding") == "chunked":
        out, rest = b"", payload
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size, 16)
            if n == 0:
                break
            out, rest = out + rest[:n], rest[n + 2 :]
        payload = out
    return int(lines[0].split()[1]), fields, payload


class Client:
    """A rater's browser, reduced to its cookies."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token, self.cookies = base, token, ""
        self.session = ""

    async def land(self) -> str:
        """Open the printed URL: keep the cookies, return where it leads."""
        status, headers, _ = await http(self.base, "GET", f"/?token={self.token}")
        assert status == 302
        jar = dict(re.findall(r"^([^=]+)=([^;]+);", headers["set-cookie"], re.MULTILINE))
        self.cookies = "; ".join(f"{k}={v}" for k, v in jar.items())
        self.session = next(v for k, v in jar.items() if k.startswith("vb_session"))
        return headers["location"]

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return await http(self.base, "GET", path, headers={"Cookie": self.cookies})

    async def answer(
        self, payload: object, *, session: str | None = None, raw: bytes | None = None
    ):
        body = raw if raw is not None else json.dumps(payload).encode()
        return await http(
            self.base,
            "POST",
            "/answer",
            headers={
                "Cookie": self.cookies,
                "Content-Type": "application/json",
                "X-Session-Token": self.session if session is None else session,
            },
            body=body,
        )


ODD = "first\u2028second\u2029third\u0085fourth"
"""Text that ``str.splitlines`` would cut into four lines."""


def lines_of(judged: Path, rater: str = "ann") -> list[dict]:
    path = judged / "human" / f"{rater}.jsonl"
    return [json.loads(x) for x in path.read_text().split("\n") if x] if path.exists() else []


def test_plans_spread_pairs_and_differ_between_raters(judged: Path):
    replies = read_replies(judged)
    pairs = judged_pairs(replies)
    assert len(pairs) == 15
    plans = [rater_plan(judged, r, replies, per_rater=10, seed=3)[0] for r in ("p1", "p2", "p3")]
    cover = Counter(t.pair for p in plans for t in p.tasks if not t.repeat)
    assert sorted(cover.values()) == [2] * 15  # 30 tasks over 15 pairs: two raters each
    order = [[(t.pair, t.shown_a) for t in p.tasks] for p in plans]
    assert order[0] != order[1] != order[2]
    for plan in plans:
        assert sum(t.repeat for t in plan.tasks) == repeats_for(10) == 1
        for n, t in enumerate(plan.tasks):
            if t.repeat:
                first = next(k for k, u in enumerate(plan.tasks) if u.pair == t.pair)
                assert n - first > 3 and plan.tasks[first].shown_a != t.shown_a
    # A plan once drawn is kept, whatever is asked later.
    again, new = rater_plan(judged, "p2", replies, per_rater=3, seed=3)
    assert not new and again == plans[1]
    # The same seed and rater draw the same plan elsewhere.
    assert draw_plan(pairs, "p1", 3, 10).tasks == plans[0].tasks


async def test_traversal_and_unknown_ids_are_404_and_names_never_leave(served, judged: Path):
    state, base, token = served
    client = Client(base, token)
    first = await client.land()
    secret_text = (judged / "judging.json").read_text()
    for path in (
        "/audio/../judging.json",
        "/audio/..%2f..%2fjudging.json",
        "/audio/%2e%2e/%2e%2e/judging.json",
        "/audio/%2e%2e%2fjudging.json",
        "/%2e%2e/judging.json",
        "/audio//etc/passwd",
        "/audio/%2Fetc%2Fpasswd",
        f"/audio/{judged}/replies.jsonl",
        "/task/../judging.json",
        "/task/%2e%2e%2f%2e%2e%2fjudging.json",
        "/judging.json",
        "/human/ann.jsonl",
        "/etc/passwd",
    ):
        status, _, body = await client.get(path)
        assert status == 404, path
        assert b"root:" not in body and b"run_dirs" not in body and secret_text.encode() not in body

    bodies = [(await client.get(first))[2]]
    page = bodies[0].decode()
    clips = re.findall(r'src="(/audio/[^"]+)"', page)
    assert len(clips) == 3  # the seeker, A and B
    for clip in clips:
        status, headers, wav = await client.get(clip)
        assert status == 200 and headers["content-type"] == "audio/wav" and wav[:4] == b"RIFF"
        bodies.append(wav)
    for task in state.plan.tasks[:3]:
        bodies.append((await client.get(f"/task/{task.id}"))[2])
        bodies.append((await client.answer({"task": task.id, "choice": 2}))[2])
    bodies.append((await client.get("/done"))[2])
    bodies.append((await client.answer({"task": state.plan.tasks[0].id, "choice": 2}))[2])
    everything = b"\n".join(bodies)
    for name in (*CONTESTANTS, "quokka", "zephyr", "reference", "fam-"):
        assert name.encode() not in everything, name
    # Escaped by the template: the transcript's markup is text.
    assert b"&lt;b&gt;it sounds hard&lt;/b&gt;" in bodies[0] and b"<b>it sounds" not in bodies[0]
    _, headers, _ = await client.get(first)
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp


async def test_bad_or_replayed_answers_write_nothing(served, judged: Path):
    state, base, token = served
    client = Client(base, token)
    await client.land()
    task = state.plan.tasks[0].id
    status, _, _ = await http(base, "GET", "/")  # no token
    assert status == 403
    status, _, _ = await http(base, "GET", "/?token=wrong")
    assert status == 403
    cases = [
        ({"task": task, "choice": 0}, None, 400),
        ({"task": task, "choice": 6}, None, 400),
        ({"task": task, "choice": "much"}, None, 400),
        ({"task": task, "choice": 1, "dimensions": {"Z": "A"}}, None, 400),
        ({"task": task, "choice": 1, "dimensions": {"E": "C"}}, None, 400),
        ({"task": task, "choice": 1, "comment": "x" * 2001}, None, 400),
        ({"task": task, "choice": 1, "extra": 1}, None, 400),
        ({"task": "0123456789abcdef", "choice": 1}, None, 404),  # well formed, not in the plan
        ({"task": "../../judging", "choice": 1}, None, 400),
        ({"task": task, "choice": 1}, "forged-session", 403),
    ]
    for payload, session, expected in cases:
        status, _, body = await client.answer(payload, session=session)
        assert status == expected, (payload, body)
    status, _, _ = await client.answer(None, raw=b"{not json")
    assert status == 400
    status, _, _ = await client.answer(None, raw=b"x" * 100_000)
    assert status == 413
    assert lines_of(judged) == []
    payload = {"task": task, "choice": 5, "dimensions": {"E": "B"}, "comment": "warmer"}
    status, _, body = await client.answer(payload)
    assert status == 200 and json.loads(body)["next"] == f"/task/{state.plan.tasks[1].id}"
    status, _, _ = await client.answer(payload)  # the same request again
    assert status == 409
    [line] = lines_of(judged)
    t = state.plan.tasks[0]
    assert (line["contestant_a"], line["contestant_b"], line["rating"]) == (
        t.shown_a,
        t.shown_b,
        -2,
    )
    assert line["dimensions"] == {"E": "B"} and line["comment"] == "warmer" and line["task"] == task
    # The file is what rate reads.
    [judgment] = folder_judgments(judged)
    assert judgment.preferred == t.shown_b and judgment.rater == "ann"


def _start(judged: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voicebench",
            "annotate",
            str(judged),
            "--rater",
            "kim",
            "--port",
            "0",
            "--per-rater",
            "6",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
    )
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, line


async def test_a_killed_server_resumes_at_the_next_unanswered_task(judged: Path):
    proc, line = _start(judged, "--seed", "11")
    base, token = re.search(r"(http://\S+)/\?token=(\S+)", line).groups()
    plan = rater_plan(judged, "kim", [], per_rater=6)[0]
    try:
        client = Client(base, token)
        assert await client.land() == f"/task/{plan.tasks[0].id}"
        for task in plan.tasks[:2]:
            # A comment may hold any text, line and paragraph separators included.
            status, _, _ = await client.answer({"task": task.id, "choice": 1, "comment": ODD})
            assert status == 200
        # A second server for the same rater would hand out the same tasks: refused.
        second = subprocess.run(
            voicebench("annotate", str(judged), "--rater", "KIM", "--port", "0"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2 and "only in case" in second.stderr
        second = subprocess.run(
            voicebench("annotate", str(judged), "--rater", "kim", "--port", "0"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2 and f"(pid {proc.pid})" in " ".join(second.stderr.split())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert [x["task"] for x in lines_of(judged, "kim")] == [t.id for t in plan.tasks[:2]]
    proc, line = _start(judged)
    try:
        base, token = re.search(r"(http://\S+)/\?token=(\S+)", line).groups()
        client = Client(base, token)
        assert await client.land() == f"/task/{plan.tasks[2].id}"
        status, _, _ = await client.answer({"task": plan.tasks[1].id, "choice": 3})
        assert status == 409  # answered before the kill
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(15)
    assert code == 0 and "stopped: 2 of 6 answered" in proc.stderr.read()
    assert [x["comment"] for x in lines_of(judged, "kim")] == [ODD, ODD]
    # rate and report read the folder's people through this, the comments' separators and all.
    assert [h.comment for h in folder_judgments(judged)] == [ODD, ODD]
    proc, _ = _start(judged)  # Ctrl-C stops it as cleanly
    proc.send_signal(signal.SIGINT)
    assert proc.wait(15) == 0 and "stopped: 2 of 6 answered" in proc.stderr.read()


def test_a_bad_rater_name_is_one_clear_error(judged: Path):
    from voicebench.errors import InputError

    with pytest.raises(InputError, match="--rater"):
        open_rating(judged, "../evil")


async def test_deeply_nested_answers_are_400_and_write_nothing(served, judged: Path):
    _, base, token = served
    client = Client(base, token)
    await client.land()
    for raw in (b"[" * 20_000 + b"]" * 20_000, b'{"task": ' * 5_000):
        status, _, _ = await client.answer(None, raw=raw)
        assert status == 400
    assert lines_of(judged) == []
