"""Write the calibration table (docs/calibration.md) from the slow simulation studies.

Every calibration study prints one line
``CALIBRATION | study | kind | nominal x | measured y | n N ...``; this script runs the slow
tests (all of them, or the files given), collects those lines and writes them as a Markdown
table, with the command that regenerates it::

    python scripts/calibration_table.py                      # every slow test (CI-sized)
    python scripts/calibration_table.py tests/test_calibration_honest.py   # some files
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "calibration.md"
PREFIX = "CALIBRATION |"
# slow tests that are not calibration studies (smoke runs, sampler agreement, recovery of known
# values): listed apart, not as studies missing their line
NOT_STUDIES = ("tests/test_cli.py", "tests/test_benchmarks_smoke.py",
               "tests/hierarchical/test_fit.py", "tests/hierarchical/test_recovery.py")


def run(paths: list[str]) -> tuple[list[list[str]], list[str], list[str]]:
    """Run the slow tests under ``paths``: the parsed CALIBRATION lines, the passed slow
    calibration tests that print none (their rates are asserted but not yet tabulated) and the
    other passed slow tests (:data:`NOT_STUDIES`)."""
    cmd = [sys.executable, "-m", "pytest", "-m", "slow", "-q", "-rA", "-p", "no:randomly",
           "-p", "no:cacheprovider", *paths]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-20:])
        raise SystemExit(f"the slow tests failed (exit {proc.returncode}):\n{tail}")
    rows: list[list[str]] = []
    printing: set[str] = set()
    current = ""
    for line in proc.stdout.splitlines():
        header = re.fullmatch(r"_{3,} (\S+) _{3,}", line.strip())
        if header:
            current = header.group(1)
        elif line.startswith(PREFIX):
            rows.append([part.strip() for part in line.split("|")[1:]])
            printing.add(current)
    passed = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("PASSED ")]
    silent = [t for t in passed if t.split("::")[-1] not in printing]
    other = [t for t in silent if t.startswith(NOT_STUDIES)]
    return rows, [t for t in silent if t not in other], other


def table(rows: list[list[str]], silent: list[str], other: list[str], paths: list[str]) -> str:
    head = ["# Calibration of evaluq's intervals and tests", "",
            "Each row is a simulation study from the slow test suite (`pytest -m slow`): the",
            "measured coverage, probability content or null-rejection rate against its nominal",
            "value. The tests assert each rate within 4 binomial standard errors of nominal (or",
            "at least nominal where the method promises to be conservative, and, for rows",
            "marked *documented*, the shortfall the documentation states). Exceptions: the",
            "hierarchical SBC asserts each coverage within the 0.05% and 99.95% binomial",
            "quantiles (and uniform ranks); Cohen's kappa allows 6 data sets more. Rows saying",
            "*lowest of N* give the smallest coverage over a grid of N cases, each asserted at",
            "least nominal.", "",
            "Regenerate with:", "", "```",
            " ".join(["python scripts/calibration_table.py", *paths]), "```", "",
            f"Generated {datetime.date.today().isoformat()}.", "",
            "| study | quantity | nominal | measured | simulations |",
            "|---|---|---|---|---|"]
    body = []
    for row in rows:
        study, kind, nominal, measured, n = (row + [""] * 5)[:5]
        body.append(f"| {study} | {kind} | {nominal.removeprefix('nominal ')} | "
                    f"{measured.removeprefix('measured ')} | {n.removeprefix('n ')} |")
    tail = ["", "## Slow studies without a tabulated rate", "",
            "These pass (each asserts its rate within binomial error of nominal, or at least",
            "nominal) but do not print a CALIBRATION line yet:", ""]
    tail += [f"- `{t}`" for t in silent] or ["- (none)"]
    tail += ["", "## Other slow tests", "",
             "Slow but not calibration studies (smoke runs of the CLI and benchmarks, agreement",
             "of the two samplers, recovery of known components):", ""]
    tail += [f"- `{t}`" for t in other] or ["- (none)"]
    return "\n".join(head + body + tail) + "\n"


def main(argv: list[str]) -> None:
    paths = argv or ["tests"]
    rows, silent, other = run(paths)
    if not rows:
        raise SystemExit("no CALIBRATION lines were printed")
    OUT.write_text(table(rows, silent, other, argv))
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
