"""PDF from the report's HTML through headless Chromium's print engine (CSS paged media).

The report and the comparison documents are one HTML document each; their PDF is that document
printed by Chromium: the running SNIA header, "Page x of y" and the per-test page labels are CSS
``@page`` margin boxes, tables split across pages with their header rows repeated, the contents
are links, and the PDF gets bookmarks from the headings (``generateDocumentOutline``). Why
Chromium and not WeasyPrint: docs/report.md, "PDF engine" (measured: the same document prints
about ten times faster, and the PDF looks exactly like the HTML a reader opens).

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: fd 3 in,
fd 4 out, one JSON message per NUL-terminated frame), so no Python package and no network port
is needed. The browser can be started early (:func:`start`) while the plots are drawn, and the
page is handed over with ``Page.setDocumentContent`` (no temporary file, nothing fetched).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any

from ..errors import UserError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
ENV = "SSDPTS_CHROMIUM"
# Margin boxes (@top-left ... with counter(pages)) print from Chromium 131 on.
MIN_MAJOR = 131
TIMEOUT_S = 120.0
INSTALL_HINT = ("install Chromium (Debian/Ubuntu: apt-get install chromium) or set SSDPTS_CHROMIUM to a "
                "Chrome/Chromium executable")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
         "--disable-features=Translate,MediaRouter,OptimizationHints", "--font-render-hinting=none",
         "--remote-debugging-pipe")


def find() -> str:
    """The Chromium executable: $SSDPTS_CHROMIUM, else the first of CANDIDATES on PATH."""
    given = os.environ.get(ENV)
    if given:
        path = shutil.which(given)
        if not path:
            raise UserError(f"{ENV}={given} is not an executable: {INSTALL_HINT}")
        return path
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    raise UserError(f"the PDF needs Chromium, which is not installed: {INSTALL_HINT}")


class Browser:
    """One headless Chromium, driven over a DevTools pipe. Use as a context manager."""

    def __init__(self, executable: str | None = None):
        self.executable = executable or find()
        self.profile = tempfile.mkdtemp(prefix="ssdpts-chromium-")
        self._log = open(os.path.join(self.profile, "stderr.txt"), "w+b")  # noqa: SIM115 (closed in close())
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds() -> None:  # the child's fd 3 reads our commands, fd 4 carries its answers
            # Copied above 10 first: either pipe end may itself be fd 3 or 4. dup2 makes 3 and 4
            # inheritable; every other fd Python opened is close-on-exec (PEP 446). Not pass_fds=(3, 4):
            # subprocess marks those before this runs, and fails (EBADF) where the parent has no fd 3 or 4.
            r, w = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        try:
            self.proc = subprocess.Popen(  # noqa: S603 (a fixed argument list)
                [self.executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
                preexec_fn=fds, close_fds=False)
        except OSError as exc:
            self.close()
            raise UserError(f"cannot start {self.executable} ({exc.strerror}): {INSTALL_HINT}") from None
        finally:
            os.close(to_chrome_r)
            os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self._session: str | None = None

    # ---- the protocol -------------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_chrome, data):]
        except (BrokenPipeError, OSError):
            self._died()
        return self._id

    def _recv(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise UserError(f"Chromium did not answer within {TIMEOUT_S:g} s while printing the PDF: "
                                "retry, or write the HTML only (--format html)")
            ready, _, _ = select.select([self._from_chrome], [], [], min(left, 1.0))
            if not ready:
                if self.proc.poll() is not None:
                    self._died()
                continue
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                self._died()
            self._buf += chunk
        frame, self._buf = self._buf.split(b"\0", 1)
        return json.loads(frame)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        n = self._send(method, params, session)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            msg = self._recv(deadline)
            if msg.get("id") == n:
                if "error" in msg:
                    raise UserError(f"Chromium refused {method}: {msg['error'].get('message')}")
                return msg.get("result", {})

    def _died(self):
        self.proc.poll()
        self._log.seek(0)
        tail = self._log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        raise UserError(f"Chromium ({self.executable}) ended unexpectedly (exit {self.proc.returncode}"
                        f"{': ' + ' | '.join(tail) if tail else ''}): {INSTALL_HINT}")

    # ---- what the report needs -----------------------------------------------------------------
    def version(self) -> tuple[str, int]:
        product = str(self.call("Browser.getVersion").get("product", ""))
        m = re.search(r"/(\d+)\.", product)
        return product, int(m.group(1)) if m else 0

    def _page(self) -> str:
        if self._session is None:
            product, major = self.version()
            if major < MIN_MAJOR:
                raise UserError(f"{product or self.executable} is too old to print the report (Chromium "
                                f"{MIN_MAJOR} or newer prints page headers): upgrade Chromium")
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return self._session

    def print_pdf(self, html: str) -> bytes:
        """The PDF of one HTML document (its @page rules decide paper size and margins)."""
        s = self._page()
        frame = self.call("Page.getFrameTree", session=s)["frameTree"]["frame"]["id"]
        self.call("Page.setDocumentContent", {"frameId": frame, "html": html}, s)
        # fonts are system fonts; wait until they are loaded so that line breaks are final, and until
        # the page's script drew the plots (templates/chart.js; a page without plots has no script)
        # (a plot that cannot be drawn says so in its place, on the screen and on paper alike)
        self.call("Runtime.evaluate", {"expression": "document.fonts.ready.then(() => window.ssdptsPlots || '')",
                                       "awaitPromise": True}, s)
        result = self.call("Page.printToPDF", {
            "preferCSSPageSize": True, "printBackground": True, "displayHeaderFooter": False,
            "generateTaggedPDF": True, "generateDocumentOutline": True,  # bookmarks from the headings
        }, s)
        return base64.b64decode(result["data"])

    def close(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            try:
                self._send("Browser.close")
                proc.wait(timeout=10)
            except (UserError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        for fd in (getattr(self, "_to_chrome", None), getattr(self, "_from_chrome", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def start() -> Browser:
    """A browser starting up now (it takes a moment; draw the plots meanwhile)."""
    return Browser()


def print_pdf(html: str, browser: Browser | None = None) -> bytes:
    """Print one HTML document to PDF, in the given browser or a new one."""
    if browser is not None:
        return browser.print_pdf(html)
    with Browser() as b:
        return b.print_pdf(html)
