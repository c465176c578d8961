"""Real headless Chromium, driven over the DevTools protocol on 127.0.0.1: every page test
(the report, the rating page) uses it.

The browser is started with a fresh profile and every background service off, opens only
the files and loopback URLs a test names, and is killed when the test ends. Events (script
exceptions, console and network errors) are kept so a test can assert there were none.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websockets

NAMES = ("chromium", "chromium-browser", "google-chrome")
STARTUP_S = 120
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
    "--mute-audio",
)


def find_chromium() -> str | None:
    return next((path for name in NAMES if (path := shutil.which(name))), None)


class Browser:
    def __init__(self, binary: str, *, width: int = 1280, height: int = 1600) -> None:
        self.binary = binary
        self.size = (width, height)
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future] = {}
        self._loaded = asyncio.Event()

    async def __aenter__(self) -> Browser:
        self._profile = tempfile.TemporaryDirectory(
            prefix="voicebench-chromium-", ignore_cleanup_errors=True
        )
        profile = Path(self._profile.name)
        self._proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                f"--window-size={self.size[0]},{self.size[1]}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # its own process group: helpers are stopped with it
        port_file = profile / "DevToolsActivePort"
        # A first start on a loaded 2-core machine (the other test worker loading models) has
        # taken over 30 s: wait up to STARTUP_S before calling it a failure.
        deadline = time.monotonic() + STARTUP_S
        while not (port_file.exists() and port_file.read_text().strip()):
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._proc.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not open its DevTools port within {STARTUP_S} s")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await websockets.connect(page["webSocketDebuggerUrl"], max_size=2**28)
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        with contextlib.suppress(Exception):
            await self._ws.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, signal.SIGKILL)  # the browser and its helper processes
        self._proc.wait(timeout=10)
        for _ in range(50):  # a helper may still be closing files in the profile
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, 0)
                time.sleep(0.1)
                continue
            break
        self._profile.cleanup()

    async def _read(self) -> None:
        async for raw in self._ws:
            message = json.loads(raw)
            if "id" in message and message["id"] in self._waiting:
                self._waiting.pop(message["id"]).set_result(message)
            elif "method" in message:
                self.events.append(message)
                if message["method"] == "Page.loadEventFired":
                    self._loaded.set()

    async def send(self, method: str, params: dict | None = None, timeout: float = 30.0) -> dict:
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = future
        await self._ws.send(
            json.dumps({"id": self._next_id, "method": method, "params": params or {}})
        )
        reply = await asyncio.wait_for(future, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def open(self, target: Path | str) -> None:
        """Open a file, or a URL (``http://127.0.0.1...``), and wait for it to load."""
        url = target if isinstance(target, str) else target.resolve().as_uri()
        self._loaded.clear()
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(self._loaded.wait(), 30)

    async def press(self, key: str, *, then_load: bool = False) -> None:
        """Type one key (``"1"``, ``" "``, ``"ArrowRight"``) as a user would; with
        ``then_load``, wait for the page it leads to."""
        if then_load:
            self._loaded.clear()
        named = {
            " ": ("Space", 32),
            "ArrowLeft": ("ArrowLeft", 37),
            "ArrowRight": ("ArrowRight", 39),
        }
        code, vk = named.get(key, (f"Digit{key}" if key.isdigit() else f"Key{key.upper()}", 0))
        vk = vk or ord(key.upper())
        text = key if len(key) == 1 else ""
        for kind in ("keyDown", "keyUp"):
            await self.send(
                "Input.dispatchKeyEvent",
                {
                    "type": kind,
                    "key": key,
                    "code": code,
                    "windowsVirtualKeyCode": vk,
                    **({"text": text} if kind == "keyDown" and text else {}),
                },
            )
        if then_load:
            await asyncio.wait_for(self._loaded.wait(), 30)

    async def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll a script expression until it is truthy; its value."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"still false after {timeout} s: {expression}")
            await asyncio.sleep(0.1)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        shot = await self.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
        path.write_bytes(base64.b64decode(shot["data"]))

    def errors(self) -> list[dict[str, Any]]:
        """Script exceptions, and console or browser log entries at error level."""
        out = [e for e in self.events if e["method"] == "Runtime.exceptionThrown"]
        out += [
            e
            for e in self.events
            if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
        ]
        out += [
            e
            for e in self.events
            if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"
        ]
        return out
