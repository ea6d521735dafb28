"""The rendered report as a person sees it: the HTML in headless Chromium, the PDF through
pdftoppm / pdftotext (poppler). Fails on a blank or broken render.

Needs /usr/bin/chromium and poppler-utils; they are installed with apt-get when missing and this
runs as root, and the tests are skipped (saying why) only when that is impossible.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
import tempfile

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")
Image = pytest.importorskip("PIL.Image")  # pillow comes with matplotlib

from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.errors import Interrupted  # noqa: E402
from ssdpts.report import render  # noqa: E402
from ssdpts.session import start_run  # noqa: E402
from ssdpts.pts.runspec import RunSpec  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _ensure(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path:
        return path
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(f"{tool} is missing and cannot be installed here (not root or no apt-get): "
                    f"apt-get install -y {package}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "install", "-y", "-q", package], ["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", package]):
        subprocess.run(cmd, capture_output=True, env=env, timeout=900, check=False)
        path = shutil.which(tool)
        if path:
            return path
    pytest.skip(f"{tool} could not be installed (apt-get install -y {package} failed)")


@pytest.fixture(scope="module")
def chromium() -> str:
    return _ensure("chromium", "chromium")


@pytest.fixture(scope="module")
def poppler() -> str:
    _ensure("pdftotext", "poppler-utils")
    return _ensure("pdftoppm", "poppler-utils")


def make_run(tmp: Path, *, interrupt: int | None = None) -> Path:
    target = open_target(str(tmp / "t.bin"), size_bytes=256 * 2**20)
    spec = RunSpec(tests=("wsat", "iops", "tp", "lat"), step_seconds=1, max_rounds=6, wsat_hours=0.5,
                   wsat_chunk_steps=10)
    try:
        start_run(spec, target, executor=FakeExecutor(noise=0.02, interrupt_on_batch=interrupt), out_dir=tmp / "runs",
                  confirm=None)
    except Interrupted:
        pass
    (run,) = (tmp / "runs").iterdir()
    return run


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("render"))
    html, pdf = render(run)
    return html, pdf


def screenshot(chromium: str, url: str, out: Path, size=(1280, 2000)) -> Image.Image:
    with tempfile.TemporaryDirectory(prefix="ssdpts-chromium-") as profile:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={out}",
                               f"--window-size={size[0]},{size[1]}", url],
                              capture_output=True, text=True, timeout=120, check=False)
    assert out.exists(), f"chromium wrote no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return Image.open(out).convert("RGB")


def ink(img: Image.Image) -> float:
    """Fraction of pixels that are not (near) white."""
    gray = img.convert("L")
    hist = gray.histogram()
    return 1 - sum(hist[246:]) / (img.width * img.height)


def has_colour(img: Image.Image, rgb: tuple[int, int, int], tol: int = 6, min_pixels: int = 200) -> bool:
    small = img.resize((img.width // 2, img.height // 2), Image.Resampling.NEAREST)
    n = sum(c for c, p in small.getcolors(maxcolors=1 << 22) if all(abs(a - b) <= tol for a, b in zip(p, rgb)))
    return n >= min_pixels


def assert_not_blank(img: Image.Image, what: str, low: float = 0.03, high: float = 0.97) -> None:
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50, f"{what}: only {len(colours)} colours: a blank or broken render"
    frac = ink(img)
    assert low < frac < high, f"{what}: {frac:.1%} of the pixels are not white: a blank or broken render"


def test_html_renders_in_chromium(chromium, reports, tmp_path):
    html, _ = reports
    img = screenshot(chromium, html.as_uri(), tmp_path / "top.png")
    assert img.size == (1280, 2000)
    assert_not_blank(img, "HTML top")
    # the CSS applied: the amber 'not PTS compliant' banner and the dark header-block captions
    assert has_colour(img, (0xFF, 0xF8, 0xC5)), "no amber compliance banner: the stylesheet did not apply"
    assert has_colour(img, (0x1F, 0x23, 0x28), tol=10), "no dark table captions: the stylesheet did not apply"


@pytest.mark.parametrize("fid", ["iops-2d", "iops-3d", "iops-window-1", "lat-histogram", "wsat-iops-time"])
def test_html_plots_render(chromium, reports, tmp_path, fid):
    """Each inline SVG plot draws: a copy of the page whose stylesheet shows only that figure."""
    html, _ = reports
    only = (f"<style>body > *:not(section), section:not(:has(#{fid})), section:has(#{fid}) > *:not(#{fid})"
            " { display: none !important; }</style></head>")
    page = tmp_path / "only.html"
    page.write_text(html.read_text(encoding="utf-8").replace("</head>", only, 1), encoding="utf-8")
    img = screenshot(chromium, page.as_uri(), tmp_path / f"{fid}.png", size=(1280, 900))
    assert_not_blank(img, f"HTML #{fid}")
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 200, f"#{fid}: too few colours for an SVG plot"


def test_html_prints(chromium, reports, tmp_path, poppler):
    """Printable: Chromium's print-to-PDF of the HTML gives several non-blank pages."""
    html, _ = reports
    out = tmp_path / "printed.pdf"
    with tempfile.TemporaryDirectory(prefix="ssdpts-chromium-") as profile:
        subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={out}",
                        "--no-pdf-header-footer", html.as_uri()], capture_output=True, timeout=180, check=False)
    assert out.exists() and out.stat().st_size > 10_000, "chromium printed nothing"
    pages = rasterize(poppler, out, tmp_path / "printed", dpi=30)
    assert len(pages) >= 8
    for p in pages[:3]:
        assert_not_blank(Image.open(p).convert("RGB"), f"printed {p.name}", low=0.01)


def rasterize(pdftoppm: str, pdf: Path, prefix: Path, dpi: int = 50) -> list[Path]:
    subprocess.run([pdftoppm, "-r", str(dpi), "-png", str(pdf), str(prefix)], check=True, capture_output=True,
                   timeout=300)
    return sorted(prefix.parent.glob(prefix.name + "-*.png"))


def test_pdf_pages_render(poppler, reports, tmp_path):
    _, pdf = reports
    pages = rasterize(poppler, pdf, tmp_path / "page")
    assert len(pages) >= 12, f"only {len(pages)} pages"
    for p in pages:
        img = Image.open(p).convert("RGB")
        assert img.width < img.height, f"{p.name} is not portrait"
        assert_not_blank(img, p.name, low=0.02, high=0.9)


def test_pdf_header_and_page_numbers_on_every_page(poppler, reports):
    _, pdf = reports
    pdftotext = shutil.which("pdftotext")
    text = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")
    pages = [p for p in pages if p.strip()]
    n = len(pages)
    for i, page in enumerate(pages, start=1):
        assert f"Page {i} of {n}" in page, f"page {i}: no 'Page {i} of {n}'"
        for label in ("ADMINISTRATIVE", "DEVICE UNDER TEST", "TEST PLATFORM", "SET-UP PARAMETERS", "TEST PARAMETERS"):
            assert label in page, f"page {i}: no {label} header box"
        assert "not PTS compliant" in page, f"page {i}: no compliance banner"
    assert "Steady state per tracking variable" in pages[0]


def test_partial_pdf_is_marked_on_every_page(poppler, tmp_path):
    run = make_run(tmp_path, interrupt=5)
    (pdf,) = render(run, formats=("pdf",))
    text = subprocess.run([shutil.which("pdftotext"), str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    pages = [p for p in text.split("\f") if p.strip()]
    assert pages
    for i, page in enumerate(pages, start=1):
        assert "PARTIAL REPORT" in page, f"page {i} is not marked partial"
    for p in rasterize(poppler, pdf, tmp_path / "partial", dpi=30):
        assert_not_blank(Image.open(p).convert("RGB"), p.name, low=0.02)
