"""voicebench talks to nothing but loopback: ONNX Runtime's telemetry, which its Linux build
sends to its vendor from every process that loads it, is off before any model is loaded, in
voicebench's process and the helpers it starts."""

from __future__ import annotations

import os
import subprocess
import sys


def _env_after_import(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    code = "import voicebench, os; print(os.environ.get('ORT_DISABLE_TELEMETRY'))"
    done = subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_voicebench_turns_onnx_runtime_telemetry_off():
    assert _env_after_import() == "1"
    assert _env_after_import(ORT_DISABLE_TELEMETRY="0") == "0"  # a user's own choice is kept
