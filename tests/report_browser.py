"""A report in headless Chromium, for tests: a tab with scripts on (:class:`Page`), and the plots
as the browser draws them (templates/chart.js): every plot figure of an HTML document gets one SVG
with its marks, and the script reports no error (:func:`drawn`)."""

from __future__ import annotations

from pathlib import Path

from ssdpts.report import chromium

# Every plot drawn by the page's script: no error, one SVG per plot figure with its axes and marks.
PLOTS_DRAWN_JS = r"""
(() => {
  const out = (window.ssdptsPlotErrors || ['the plot script did not run']).slice();
  if (window.ssdptsPlots !== 'done') out.push('plots not done');
  const figs = document.querySelectorAll('figure.plot');
  for (const fig of figs) {
    const svgs = fig.querySelectorAll('svg.chart');
    if (svgs.length !== 1) { out.push(`${fig.id}: ${svgs.length} SVGs`); continue; }
    const n = svgs[0].querySelectorAll('path, rect, polygon, line, circle').length;
    if (n < 10) out.push(`${fig.id}: ${n} marks`);
  }
  return {problems: out, plots: figs.length};
})()
"""


class Page:
    """A Chromium tab with scripts on, for the HTML's interactions."""

    def __init__(self, browser: chromium.Browser, width: int = 1280, height: int = 900):
        self.b = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                            "mobile": False}, self.s)
        self.width = width

    def open(self, path: Path) -> None:
        self.b.call("Page.enable", session=self.s)
        self.b.call("Page.navigate", {"url": path.as_uri()}, self.s)
        self.js("new Promise(r => { if (document.readyState === 'complete') r(1); "
                "else addEventListener('load', () => r(1)); })")

    def print_media(self, on: bool) -> None:
        self.b.call("Emulation.setEmulatedMedia", {"media": "print" if on else "screen"}, self.s)

    def js(self, expr: str):
        r = self.b.call("Runtime.evaluate", {"expression": expr, "awaitPromise": True, "returnByValue": True}, self.s)
        if "exceptionDetails" in r:
            raise AssertionError(f"script error: {r['exceptionDetails']}")
        return r["result"].get("value")

    def mouse(self, kind: str, x: float, y: float) -> None:
        self.b.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                 "clickCount": 1 if kind != "mouseMoved" else 0}, self.s)

    def shot(self, out: Path, clip: dict | None = None):
        """A screenshot (PNG) written to ``out``, returned as a PIL image (RGB)."""
        import base64

        from PIL import Image

        params = {"format": "png"} | ({"clip": {**clip, "scale": 1}} if clip else {})
        out.write_bytes(base64.b64decode(self.b.call("Page.captureScreenshot", params, self.s)["data"]))
        return Image.open(out).convert("RGB")


def drawn(html: Path) -> dict:
    """{"problems": [...], "plots": n} for an HTML file, drawn in headless Chromium."""
    with chromium.Browser() as b:
        page = Page(b)
        page.open(html.resolve())
        return page.js(PLOTS_DRAWN_JS)
