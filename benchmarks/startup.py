"""What starting a process costs: CPU seconds and peak memory of what each kind of
process loads, in fresh interpreters, for this checkout and (``--baseline-ref``)
another commit's, in the same run.

    .venv/bin/python -m benchmarks.startup [--runs 7] [--baseline-ref REF]

Kinds of process:

* ``bot``: ``python -m telegram_bot`` up to its ``main`` (every role imports it);
* ``think worker``: a spawned think worker (:mod:`telegram_bot.platform.thinking`)
  up to its first hard move: the thinking module, a hard player and its
  double-dummy solver;
* ``cluster role's think worker``: the same, plus the parent's main module when
  ``docker-compose.yml`` of that checkout starts the worker role as a module other
  than a package's ``__main__``: a spawned child imports its parent's main module
  (as ``__mp_main__``) unless it is a package's ``__main__``.

CPU is the child's own user and system time (``getrusage``), the interpreter's start
included; memory its peak resident set. CPU time holds under load; the load average
is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.botprocess import ROOT, checkout

_REPORT = (
    "import json, resource; r = resource.getrusage(resource.RUSAGE_SELF); "
    "import telegram_bot; "
    "print(json.dumps([r.ru_utime + r.ru_stime, r.ru_maxrss / 1024, telegram_bot.__file__]))"
)
_WORKER = "import telegram_bot.platform.thinking; import core.players.hard as h; h.HardPlayer()"


def _worker_main_module(tree: Path) -> str | None:
    """The module the compose file's worker role runs as, if a spawned child imports it."""
    compose = (tree / "docker-compose.yml").read_text()
    found = re.search(r'"python", "-m", "([\w.]+)", "worker"', compose)
    if found is None:
        raise SystemExit(f"no worker command in {tree / 'docker-compose.yml'}")
    module = found.group(1)
    return None if module.count(".") == 0 or module.endswith(".__main__") else module


def kinds(tree: Path) -> dict[str, str]:
    main = _worker_main_module(tree)
    return {
        "bot": "import telegram_bot.__main__",
        "think worker": _WORKER,
        "cluster role's think worker": (f"import {main}; " if main else "") + _WORKER,
    }


def measure(tree: Path, code: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{_REPORT}"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    cpu, rss, where = json.loads(done.stdout.strip().splitlines()[-1])
    if not where.startswith(str(tree)):  # another checkout's code would be measured
        raise SystemExit(f"{where} is not in {tree}")
    return cpu, rss


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--baseline-ref", help="a commit to measure in the same run (git worktree)")
    opts = p.parse_args()
    with contextlib.ExitStack() as stack:
        trees = [("today", ROOT)]
        if opts.baseline_ref:
            trees.append((opts.baseline_ref, stack.enter_context(checkout(opts.baseline_ref))))
        print(f"load {os.getloadavg()[0]:.1f}; median of {opts.runs} fresh interpreters")
        print(f"{'process':30} {'checkout':10} {'CPU s':>7} {'peak MiB':>9}")
        table = {name: kinds(tree) for name, tree in trees}
        for kind in table["today"]:
            for name, tree in trees:
                code = table[name][kind]
                measure(tree, code)  # unmeasured: the checkout's .pyc files written
                runs = [measure(tree, code) for _ in range(opts.runs)]
                cpu = statistics.median(r[0] for r in runs)
                rss = statistics.median(r[1] for r in runs)
                print(f"{kind:30} {name:10} {cpu:7.2f} {rss:9.0f}")
        print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
