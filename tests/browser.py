"""Headless Chromium, driven over the DevTools protocol, for the tests of the HTML reports.

Chromium runs in its own process group on a leased loopback port and is killed as a group on close. A page
is opened from disk; everything the page logs as an error, every request that fails, and every request
that leaves the disk (the report must make none) is collected while it loads.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websocket
from support import DEADLINE

from paidtwice.engine._ports import HOST, lease_port

__all__ = [
    "README_PICTURE",
    "Browser",
    "PageLoad",
    "find_chromium",
    "page_digest",
    "png_page_digest",
    "tag_png",
]

_LARGEST_SHOT = 16000
"""Pixels of a page Chromium paints in one screenshot; further down the picture is blank."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageLoad:
    """What happened while a page loaded."""

    errors: list[str] = field(default_factory=list)
    """Console errors, uncaught exceptions and error log entries."""
    failed: list[str] = field(default_factory=list)
    """Requests that failed or were answered with an error status."""
    requests: list[str] = field(default_factory=list)
    """Every URL the page requested."""
    load_seconds: float = 0.0
    """From navigation to the load event."""


class Browser:
    def __init__(self, binary: str) -> None:
        self._lease = lease_port()
        self._profile = Path(tempfile.mkdtemp(prefix="paidtwice-chromium-"))
        self._process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                f"--remote-debugging-address={HOST}",
                f"--remote-debugging-port={self._lease.port}",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._ids = 0
        self._ws: websocket.WebSocket | None = None
        try:
            self._ws = websocket.create_connection(self._page_socket(), timeout=60)
        except BaseException:
            self.close()
            raise

    def _page_socket(self) -> str:
        base = f"http://{HOST}:{self._lease.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                targets = httpx.get(f"{base}/json/list", timeout=5).json()
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            except httpx.HTTPError:
                pass
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait(timeout=DEADLINE)
        self._lease.release()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the protocol ----------------------------------------------------------------------------------------

    def _send(self, method: str, **params: Any) -> int:
        assert self._ws is not None
        self._ids += 1
        self._ws.send(json.dumps({"id": self._ids, "method": method, "params": params}))
        return self._ids

    def call(self, method: str, *, events: list[dict[str, Any]] | None = None, **params: Any) -> Any:
        """Send a command and wait for its answer; events that arrive meanwhile go to `events`."""
        assert self._ws is not None
        sent = self._send(method, **params)
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if events is not None and "method" in message:
                events.append(message)

    def open(self, path: Path, *, timeout: float = 60.0) -> PageLoad:
        events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", events=events)
        started = time.monotonic()
        self.call("Page.navigate", events=events, url=path.resolve().as_uri())
        assert self._ws is not None
        deadline = time.monotonic() + timeout
        while not any(e["method"] == "Page.loadEventFired" for e in events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} did not load in {timeout:.0f}s")
            events.append(json.loads(self._ws.recv()))
        load = PageLoad(load_seconds=time.monotonic() - started)
        # Anything still queued (a late error) is read with a round trip.
        self.call("Runtime.evaluate", events=events, expression="1")
        for event in events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                load.errors.append(json.dumps(params.get("args")))
            elif method == "Runtime.exceptionThrown":
                load.errors.append(json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                load.errors.append(str(params["entry"].get("text")))
            elif method == "Network.requestWillBeSent":
                load.requests.append(str(params["request"]["url"]))
            elif method == "Network.loadingFailed":
                load.failed.append(f"{params.get('errorText')} ({params.get('requestId')})")
            elif method == "Network.responseReceived" and params["response"].get("status", 200) >= 400:
                load.failed.append(f"{params['response']['status']} {params['response']['url']}")
        return load

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, width: int = 1200, height: int | None = None) -> Path:
        """A PNG of the page's top `height` pixels (all of it when None, up to what Chromium paints in one
        shot: below about 16,000 pixels it paints nothing)."""
        # The size an earlier screenshot set would otherwise be the next page's height.
        self.call("Emulation.clearDeviceMetricsOverride")
        full = self.evaluate("document.documentElement.scrollHeight")
        clip_height = min(int(full), height or _LARGEST_SHOT)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=clip_height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = self.call(
            "Page.captureScreenshot",
            format="png",
            clip={"x": 0, "y": 0, "width": width, "height": clip_height, "scale": 1},
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def pdf(self, path: Path) -> Path:
        """Print the page to PDF, as a user's "Save as PDF" does."""
        printed = self.call("Page.printToPDF", printBackground=True)
        path.write_bytes(base64.b64decode(printed["data"]))
        return path


# -- the README's picture ----------------------------------------------------------------------------------

README_PICTURE = Path(__file__).resolve().parent.parent / "docs" / "report-deck.png"
"""The deck report's picture in the README, made by scripts/report_screenshot.py."""

_PAGE_KEY = b"paidtwice-page"


def page_digest(page: str) -> str:
    """What a page looks like, without the time it was made: a picture of it is current while this holds."""
    timeless = re.sub(r"Made by paidtwice at [^.]*?(?= from|\.)", "Made by paidtwice", page, count=1)
    return hashlib.sha256(timeless.encode()).hexdigest()


def tag_png(png: bytes, digest: str) -> bytes:
    """The PNG with a text chunk naming the page it shows (after the header chunk, as PNG allows)."""
    data = _PAGE_KEY + b"\0" + digest.encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    header_end = 8 + 8 + 13 + 4  # signature, then IHDR: length and type, 13 bytes of data, its CRC
    return png[:header_end] + chunk + png[header_end:]


def png_page_digest(png: bytes) -> str | None:
    """The digest `tag_png` put in the PNG, if any."""
    at = 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        data = png[at + 8 : at + 8 + length]
        if kind == b"tEXt" and data.startswith(_PAGE_KEY + b"\0"):
            return data[len(_PAGE_KEY) + 1 :].decode()
        at += 12 + length
    return None
