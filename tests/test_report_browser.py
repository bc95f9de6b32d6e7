"""The report in a real browser: headless Chromium loads it with no console messages and shows
every section and figure.

The report has no script of its own; the test appends a probe script to a copy of the page that
records, once the page has loaded, how many images decoded with a non-zero size and which
sections have a non-zero height, and logs one line. Chromium's ``--enable-logging=stderr``
prints every console message (errors and warnings included), so any line besides the probe's
fails the test. Skipped only when no Chromium binary exists (``.ci/run`` installs Debian's).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import evaluq as eq

from .test_report import FakeFit

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                      "google-chrome")) if p), None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary on PATH: install Debian's `chromium` "
                             "(apt-get install -y chromium) to run the browser test")

PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = Array.from(document.images);
  var shown = imgs.filter(function (i) {
    var r = i.getBoundingClientRect();
    return i.complete && i.naturalWidth > 0 && r.width > 0 && r.height > 0; });
  var secs = Array.from(document.querySelectorAll("section.report-section"));
  var visible = secs.filter(function (s) { return s.getBoundingClientRect().height > 0; });
  document.body.setAttribute("data-probe", JSON.stringify({
    images: imgs.length, shown: shown.length,
    sections: secs.map(function (s) { return s.id; }),
    visible: visible.map(function (s) { return s.id; })}));
  console.log("evaluq-probe-done");
});
</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    profile.mkdir()
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--no-first-run", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _load(tmp_path: Path, page: str) -> tuple[dict, list[str]]:
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", probed.as_uri())
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, f"the page did not finish loading; chromium said:\n{proc.stderr[-2000:]}"
    console = re.findall(r"CONSOLE[^\]]*\] (.*)", proc.stderr)
    return json.loads(html.unescape(found.group(1))), console


@pytest.fixture(scope="module")
def page():
    cube = eq.simulate_cube(n_models=4, model_means=[0.0, 0.3, 1.5, 2.0], sigma_between=0.5,
                            rng=3)
    fit = FakeFit(eq.aggregate(eq.resample(cube, n_resamples=200, rng=1)))
    return eq.report(cube, None, n_resamples=200, rng=1, fit=fit, progress=False)


def test_report_loads_without_console_messages_and_shows_everything(tmp_path, page):
    probe, console = _load(tmp_path, page.html)
    expected = ["data", "variance", "leaderboard", "ranks", "tiers", "field", "posterior",
                "reproducibility"]
    assert probe["sections"] == expected
    assert probe["visible"] == expected
    n_figures = sum(s.figures for s in page.sections["simulated"])
    assert probe["images"] == n_figures == 8
    assert probe["shown"] == n_figures
    # the probe's line and nothing else: no error, warning or message from the page
    assert len(console) == 1, console
    assert console[0].startswith('"evaluq-probe-done"')


def test_the_probe_catches_a_broken_figure(tmp_path, page):
    broken = page.html.replace('src="data:image/png;base64,', 'src="data:image/png;base64,AA', 1)
    probe, _ = _load(tmp_path, broken)
    assert probe["images"] == 8
    assert probe["shown"] == 7


def test_screenshot_of_the_whole_report(tmp_path, page):
    path = tmp_path / "report.html"
    path.write_text(page.html, encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path, "--hide-scrollbars", "--window-size=1200,6000",
                     f"--screenshot={shot}", path.as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 100_000   # figures and tables, not a blank page


@pytest.fixture(scope="module")
def item_page():
    """A report with the item model (per-item scores, bayes=True): its section has a figure."""
    import warnings

    table = eq.simulate_items(n_models=3, n_items=20, n_epochs=2, rng=5)
    cols = {"model": "model", "item": "item", "score": "score", "seed": "epoch"}
    cube = eq.from_items(table, n_boot=100, **cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return eq.report(cube, None, n_resamples=200, rng=1, bayes=True, progress=False,
                         bayes_options={"draws": 200, "tune": 200},
                         item_scores=eq.item_scores(table, **cols))


def test_the_item_model_report_shows_everything(tmp_path, item_page):
    probe, console = _load(tmp_path, item_page.html)
    assert "item-model" in probe["sections"]
    assert "posterior" not in probe["sections"]
    assert probe["visible"] == probe["sections"]
    n_figures = sum(s.figures for s in item_page.sections["score"])
    item_section = next(s for s in item_page.sections["score"] if s.id == "item-model")
    assert item_section.figures == 1
    assert probe["images"] == n_figures == probe["shown"]
    assert len(console) == 1, console


LAYOUT_PROBE = """<script>
window.addEventListener("load", function () {
  var cells = Array.from(document.querySelectorAll("table.data td, table.data th"));
  var line = parseFloat(getComputedStyle(document.querySelector("table.data td")).lineHeight);
  var overflow = cells.filter(function (c) { return c.scrollWidth > c.clientWidth + 1; });
  var single = cells.filter(function (c) { return c.rowSpan <= 1; });   // not index groups
  var tallest = Math.max.apply(null, single.map(function (c) {
    return c.getBoundingClientRect().height; }));
  document.body.setAttribute("data-probe", JSON.stringify({
    cells: cells.length, line: line, tallest: tallest,
    overflow: overflow.slice(0, 5).map(function (c) { return c.textContent.slice(0, 40); }),
    height: document.documentElement.scrollHeight}));
  console.log("evaluq-probe-done");
});
</script>"""


@pytest.fixture(scope="module")
def demo_bayes_page():
    """The demo's predictions reported with the real hierarchical fit (bayes=True)."""
    from evaluq.demo import demo_cube

    cube = demo_cube(n_boot=200)
    return eq.report(cube, None, n_resamples=500, rng=0, bayes=True, progress=False)


@pytest.mark.slow
def test_the_bayes_page_keeps_its_tables_readable(tmp_path, demo_bayes_page):
    """No table cell narrower than its words (nothing overflows), no cell taller than three
    lines (the comparison's long texts are footnotes, not a one-word-wide column), and a
    page of sane height."""
    probed = tmp_path / "probed.html"
    probed.write_text(demo_bayes_page.html.replace("</body>", LAYOUT_PROBE + "</body>"),
                      encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", "--window-size=1280,900", probed.as_uri())
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, proc.stderr[-2000:]
    probe = json.loads(html.unescape(found.group(1)))
    assert probe["cells"] > 100
    assert probe["overflow"] == []
    assert probe["tallest"] <= 3.2 * probe["line"], probe
    assert probe["height"] < 16_000, probe
