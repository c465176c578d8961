"""A SIP call as a phone system places it, with known delays: voicebench calls through
kamailio (a proxy and registrar from Debian that asks for digest credentials) to baresip (an
independent SIP user agent from Debian, registered there), which answers by playing a known
recording: ``--burst-s`` of a 440 Hz tone at the start of every ``--every-s`` seconds.

Whatever the seeker says, baresip's answers start on that grid, on baresip's own sample
clock. So each reply's first audible sample, as voicebench times it, must fall a whole number
of ``--every-s`` after the first reply's: how far it falls off the grid is the caller's
timing error through a real proxy and a real user agent (its jitter buffer's depth is the
same for every reply, so it cancels). The run is ``voicebench run`` with a spec file, as a
user runs it, with the proxy's credentials in environment variables; the script checks that
the password is in no file the run wrote.

    python benchmarks/sip_proxy.py [--limit 6] [--every-s 6] [--out DIR]

Needs ``baresip`` and ``kamailio`` (``make sip-tools``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from sip_tools import baresip, kamailio  # noqa: E402

from voicebench.fixtures.audio import write_wav  # noqa: E402

RATE = 8_000
USERS = {"alice": "alice-pass-5150", "bob": "bob-pass-6160"}
SPEC = """name = "baresip-bob"
family = "baresip"
[remote]
url = "sip:bob@{host}:{port}"
protocol = "sip"
quiet_secs = 0.8
[remote.sip]
username_env = "VB_SIP_USER"
password_env = "VB_SIP_PASSWORD"
"""


def bursts(path: Path, seconds: float, every_s: float, burst_s: float) -> None:
    t = np.arange(int(seconds * RATE)) / RATE
    on = (t % every_s) < burst_s
    write_wav(path, (0.3 * 32767 * np.sin(2 * np.pi * 440 * t) * on).astype(np.int16), RATE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=6, help="dialogues (final turns) to replay")
    parser.add_argument("--every-s", type=float, default=6.0)
    parser.add_argument("--burst-s", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="keep the run here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        out = args.out or folder / "run"
        bursts(folder / "bob.wav", 30.0 * args.limit, args.every_s, args.burst_s)
        with (
            kamailio(folder / "proxy", USERS) as proxy,
            baresip(
                folder / "bob", folder / "bob.wav", registrar=proxy.address, password=USERS["bob"]
            ),
        ):
            host, port = proxy.address
            spec = folder / "bob.toml"
            spec.write_text(SPEC.format(host=host, port=port))
            env = {**os.environ, "VB_SIP_USER": "alice", "VB_SIP_PASSWORD": USERS["alice"]}
            command = [sys.executable, "-m", "voicebench", "run", "--agent", str(spec)]
            command += ["--limit", str(args.limit), "--final-only", "--out", str(out)]
            subprocess.run(command, env=env, check=False, cwd=ROOT)
        records = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
        heard = [r for r in records if r["error"] is None]
        leaked = [
            str(p)
            for p in out.rglob("*")
            if p.is_file() and USERS["alice"].encode() in p.read_bytes()
        ]
    print(f"\n{len(heard)} of {len(records)} replies heard; password in {len(leaked)} files")
    if not heard:
        return
    first = heard[0]["timing"]["audio_out_ns"]
    off = []
    for r in heard:
        since = (r["timing"]["audio_out_ns"] - first) / 1e9
        grid = round(since / args.every_s) * args.every_s
        off.append((since - grid) * 1000)
        print(
            f"{r['dialogue_id']:<32} TTFA {r['timing']['ttfa_ms']:>8.1f} ms, heard at "
            f"+{since:8.3f} s: {off[-1]:+.2f} ms off baresip's {args.every_s:g} s grid"
        )
    print(f"|off the grid| max {max(abs(x) for x in off):.2f} ms over {len(off)} replies")


if __name__ == "__main__":
    main()
