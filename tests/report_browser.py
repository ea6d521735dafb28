"""The plots of a report as the browser draws them (templates/chart.js), for tests: every plot
figure of an HTML document gets one SVG with its marks, and the script reports no error."""

from __future__ import annotations

from pathlib import Path

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


def drawn(html: Path | str) -> dict:
    """{"problems": [...], "plots": n} for an HTML file or text, drawn in headless Chromium."""
    from ssdpts.report import chromium

    text = html.read_text(encoding="utf-8") if isinstance(html, Path) else html
    with chromium.Browser() as b:
        s = b.call("Target.attachToTarget", {"targetId": b.call("Target.createTarget", {"url": "about:blank"})["targetId"],
                                             "flatten": True})["sessionId"]
        frame = b.call("Page.getFrameTree", session=s)["frameTree"]["frame"]["id"]
        b.call("Page.setDocumentContent", {"frameId": frame, "html": text}, s)
        r = b.call("Runtime.evaluate", {"expression": PLOTS_DRAWN_JS, "returnByValue": True}, s)
    return r["result"]["value"]
