"""The bad-input census (issue 35): run every case of the corpus, strict xfails included, and
count the failures by the issue's classes.

Run from the repository root::

    .venv/bin/python tests/bad_input/census.py              # the table, then the failures
    .venv/bin/python tests/bad_input/census.py -k power     # the cases whose id has "power"
    .venv/bin/python tests/bad_input/census.py --owners     # the failures by owning module

Each case runs in a forked child with a time limit and an address-space limit, so a call that
would allocate a huge array (or run for ever) is counted, not suffered. The classes:

* ``crash``: another exception than ValueError / TypeError (KeyError, IndexError, ...);
* ``huge``: an out-of-memory error or the time limit (a size that was neither chunked nor
  refused with the memory it needs);
* ``silent_nan``: a NaN or inf in the result with no ``nan_reason``;
* ``accepted``: bad input returned a result (nonsense in, numbers out);
* ``vague``: a ValueError / TypeError whose message names no argument in backticks;
* ``other_message``: a ValueError / TypeError naming an argument, not the one expected;
* ``refused_valid``: a case that must return numbers raised instead;
* ``warning``: a warning (pytest turns warnings into errors) where an error was expected;
* ``unnamed``: the expected error, whose message matches the case but names no argument in
  backticks (the corpus passes; counted as vague by the issue's stricter reading).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import resource
import signal
import sys
import traceback
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evaluq as eq
from bad_input.corpus import FINITE
from bad_input.test_corpus import CASES, resolve, unexplained_nan

CLASSES = ("crash", "huge", "silent_nan", "accepted", "vague", "other_message",
           "refused_valid", "warning", "unnamed")
# the modules other helpers edit (issue 35): their failures are listed, not fixed here
OTHERS = ("evaluq.item_model", "evaluq.ratings", "evaluq.judges", "evaluq._nutpie_cache",
          "evaluq.reporting", "evaluq.cli")
# a message names an argument: in backticks, or Python's own call-signature error
ARGUMENT = re.compile(r"`[^`]+`|positional argument")


def classify(case) -> tuple[str, str]:
    """(class or "ok", detail) of one case, run here (in the child)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", eq.metrics.UndefinedMetricWarning)
            result = case.call()
    except MemoryError as exc:
        return "huge", f"{type(exc).__name__}: {exc}"[:300]
    except Warning as exc:
        return ("warning" if case.match != FINITE else "refused_valid",
                f"{type(exc).__name__}: {exc}"[:300])
    except case.errors as exc:
        text = f"{type(exc).__name__}: {exc}"
        if case.match == FINITE:
            return "refused_valid", text[:300]
        if re.search(case.match, str(exc)):
            return ("ok", "") if ARGUMENT.search(str(exc)) else ("unnamed", text[:300])
        return ("other_message" if ARGUMENT.search(str(exc)) else "vague"), text[:300]
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return "crash", (f"{type(exc).__name__}: {exc}"[:240]
                         + f"  [{Path(where.filename).name}:{where.lineno}]")
    nan = unexplained_nan(result)
    if nan:
        return "silent_nan", f"unexplained NaN in {nan}"
    if case.match == FINITE:
        return "ok", ""
    return "accepted", f"returned {type(result).__name__}"


def run_case(case, timeout: float, memory: int) -> tuple[str, str]:
    """Classify ``case`` in a forked child (time and address-space limits)."""
    read, write = os.pipe()
    with warnings.catch_warnings():         # a fork while BLAS threads idle: the child
        warnings.simplefilter("ignore", DeprecationWarning)  # only runs the one case
        pid = os.fork()
    if pid == 0:                                               # the child
        os.close(read)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)                                    # the cases' own printing
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            signal.alarm(int(timeout))
            outcome = classify(case)
        except BaseException as exc:
            outcome = ("crash", f"{type(exc).__name__}: {exc}"[:300])
        with os.fdopen(write, "wb") as out:
            pickle.dump(outcome, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as inp:
        data = inp.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM
        return "huge", ("ran past the time limit" if killed else f"child died ({status})")
    return pickle.loads(data)


def owner(case) -> str:
    """The module defining the case's public object."""
    try:
        obj = resolve(case.name)
    except Exception:
        return "?"
    return getattr(obj, "__module__", "?") or "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only the cases whose id contains this")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--memory", type=float, default=6.0, help="GiB per case")
    parser.add_argument("--owners", action="store_true", help="failures by owning module")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.k in f"{c.name}:{c.label}"]
    counts: Counter[str] = Counter()
    failures = []
    for case in cases:
        klass, detail = run_case(case, args.timeout, int(args.memory * 2**30))
        counts[klass] += 1
        if klass != "ok":
            failures.append((owner(case), klass, case, detail))
        mark = "xfail " if case.xfail else ""
        print(f"{klass:>13}  {mark}{case.name}:{case.label}", file=sys.stderr, flush=True)
    theirs = sum(1 for mod, *_ in failures if mod.startswith(OTHERS))
    print(f"\nbad-input census: {len(cases)} cases, {counts['ok']} ok, "
          f"{len(failures)} failures ({theirs} in modules other helpers edit)\n")
    print("| class | count |\n|---|---|")
    for klass in CLASSES:
        print(f"| {klass} | {counts[klass]} |")
    print()
    key = (lambda f: (f[0], f[1])) if args.owners else (lambda f: (f[1], f[0]))
    for mod, klass, case, detail in sorted(failures, key=lambda f: (*key(f), f[2].name)):
        mark = " (xfail)" if case.xfail else ""
        print(f"- [{klass}] {case.name}: {case.label}{mark}  <{mod}>\n    {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
