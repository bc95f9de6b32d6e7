"""The screenshot of the demo's --bayes page in the docs (docs/guides/report_posterior.png).

The demo's predictions reported with the real hierarchical fit; its posterior section (the
posterior-versus-frequentist table, the posterior forest plot, the sampler diagnostics)
rendered alone and photographed by headless Chromium.

Run: ``python scripts/report_screenshot.py`` (needs Debian's ``chromium``).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import evaluq as eq
from evaluq.demo import demo_cube
from evaluq.reporting.sections import render_page

OUT = Path(__file__).resolve().parents[1] / "docs" / "guides" / "report_posterior.png"


def main() -> None:
    rep = eq.report(demo_cube(n_boot=1000), None, n_resamples=2000, rng=0, bayes=True,
                    progress=False)
    posterior = next(s for s in rep.sections["accuracy"] if s.id == "posterior")
    page = render_page("evaluq report: accuracy (the posterior section)",
                       [(None, [posterior])], subtitle="evaluq report --bayes, demo data")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs chromium (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        path.write_text(page, encoding="utf-8")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--no-first-run",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp}/profile", "--hide-scrollbars",
                        "--window-size=1200,2400", "--virtual-time-budget=10000",
                        f"--screenshot={OUT}", path.as_uri()], check=True,
                       capture_output=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
