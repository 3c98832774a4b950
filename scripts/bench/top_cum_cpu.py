#!/usr/bin/env python3
"""ilocktop's own CPU after a renewal of its tables, in the rates view and
in the cumulative view ('c'), which after a renewal is put together at
every rebuild from the old tables' retired totals and the current ones.

Runs ilocktop on a real terminal (a detached tmux session, as its tests
do) with -i 1 and tables just big enough for NFILES locks to fill them
past 80% (--max-inodes), while build/helpers/contend_many keeps all NFILES
files of a loop-mounted XFS contended flat out. Once every file is
tracked, and before the renewal (--renew, 60 s), it measures ilocktop's
CPU (/proc/PID/schedstat) over SECONDS in one view, presses c, and over
SECONDS in the other; then again after the renewal (and --settle
seconds), the views in the other order; the order alternates between
runs. Prints each run and the medians, as % of one core.

Needs root, XFS, losetup, tmux, and `make all helpers`. Creates and
removes its own image, loop device, mount and tmux session.

usage: scripts/bench/top_cum_cpu.py [--files N] [--runs R] [--seconds S] [--renew S]
                                    [--settle S]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from top_cpu import BUILD, Fs, cpu_ns, stop  # noqa: E402

SESSION = f"ilock-cumbench-{os.getpid()}"


def tmux(*args):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_screen(pred, what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.25)
    raise SystemExit(f"timed out waiting for {what}; screen:\n{screen()}")


def pct_over(pid, secs):
    c0, t0 = cpu_ns(pid), time.monotonic()
    time.sleep(secs)
    return (cpu_ns(pid) - c0) / 1e9 / (time.monotonic() - t0) * 100


def measure(top, views, got, when):
    """ilocktop's CPU in each view in turn, keyed (view, when)."""
    for v in views:
        if (v == "cumulative") != ("showing: totals since" in screen()):
            tmux("send-keys", "-t", SESSION, "c")
            wait_screen(lambda s: ("showing: totals since" in s) == (v == "cumulative"),
                        f"the {v} view", 10)
        time.sleep(1)
        got[(v, when)] = pct_over(top, got["secs"])


def one_run(args, fs, cumulative_first):
    work = os.path.join(fs.mnt, f"d{time.monotonic_ns()}")
    wl = subprocess.Popen([os.path.join(BUILD, "helpers", "contend_many"), work,
                           str(args.files), "600", "4"], stdout=subprocess.PIPE, text=True)
    views = ["cumulative", "rates"] if cumulative_first else ["rates", "cumulative"]
    got = {"secs": args.seconds}
    try:
        assert wl.stdout.readline().startswith("READY"), "contend_many did not start"
        cap = args.files * 9 // 8  # locks and pairs both past 80%, not full
        cmd = (f"{BUILD}/ilocktop -i 1 --max-inodes {cap} --renew {args.renew} "
               f"-D {fs.mnt}")
        tmux("new-session", "-d", "-s", SESSION, "-x", "200", "-y", "50",
             "env", "TERM=screen", *cmd.split())
        top = int(tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())
        # before the renewal: the tables as full as they get, every file tracked
        wait_screen(lambda s: (m := re.search(r"locks: ([\d,]+) tracked", s)) and
                    int(m.group(1).replace(",", "")) >= args.files * 0.98, "all files tracked",
                    60)
        time.sleep(2)
        measure(top, views, got, "before")
        if re.search(r"^fresh tables", screen(), re.M):
            raise SystemExit("the renewal came inside the first measurement: raise --renew")
        wait_screen(lambda s: re.search(r"^fresh tables .* ago \(1 so far\)", s, re.M),
                    "the renewal", args.renew + 60)
        # after it: the fresh tables refilled, the old totals retired
        time.sleep(args.settle)
        measure(top, list(reversed(views)), got, "after")
        s = screen()
        m = re.search(r"locks: ([\d,]+) tracked", s)
        got["tracked"] = int(m.group(1).replace(",", "")) if m else 0
        if re.search(r"\(2 so far\)", s):
            raise SystemExit("a second renewal came inside the measurement: raise --renew")
        return got
    finally:
        tmux("send-keys", "-t", SESSION, "q")
        time.sleep(1)
        tmux("kill-session", "-t", SESSION)
        stop(wl)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--renew", type=int, default=60)
    ap.add_argument("--settle", type=float, default=5)
    args = ap.parse_args()
    fs = Fs()
    rows = []
    keys = [(v, w) for w in ("before", "after") for v in ("rates", "cumulative")]
    try:
        for r in range(args.runs):
            got = one_run(args, fs, r % 2 == 1)
            rows.append(got)
            print(f"run {r + 1}: " + ", ".join(f"{v} {w} {got[(v, w)]:.2f}%" for v, w in keys) +
                  f" ({got['tracked']:,} locks in the last view)", flush=True)
    finally:
        fs.close()
    med = {k: statistics.median(g[k] for g in rows) for k in keys}
    print(f"median over {len(rows)} runs, {args.files:,} files contended, % of a core: " +
          ", ".join(f"{v} view {w} the renewal {med[(v, w)]:.2f}" for v, w in keys))
    print(f"the cumulative view after the renewal over before it: "
          f"{med[('cumulative', 'after')] / med[('cumulative', 'before')]:.2f}x "
          f"(+{med[('cumulative', 'after')] - med[('cumulative', 'before')]:.2f} points)")


if __name__ == "__main__":
    main()
