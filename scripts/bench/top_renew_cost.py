#!/usr/bin/env python3
"""What a renewal of ilocktop's tables (--renew) costs it, builds side by side.

For each ILOCKTOP (a path to an ilocktop binary), in alternating order over
RUNS runs: makes a loop-mounted XFS, keeps NFILES files contended flat out
(build/helpers/contend_many), and runs

    ILOCKTOP -b -i 1 -n 30 --renew 10 --max-inodes NFILES*1.1 -D MNT

whose tables fill past 80% at once, so that it renews them as soon as
--renew allows. Prints, per run, the highest per-interval CPU ilocktop
reports (`ilocktop N% of a CPU`: the interval that holds the renewal,
with the fresh programs' load) and the median interval; then each build's
figures.

Needs root, XFS, losetup, and `make all helpers`. Creates and removes its
own image, loop device and mount, even on failure.

usage: scripts/bench/top_renew_cost.py [--files N] [--runs R] ILOCKTOP [ILOCKTOP...]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from top_cpu import BUILD, Fs, stop  # noqa: E402


def one(top, files):
    fs = Fs()
    wl = None
    try:
        wl = subprocess.Popen([os.path.join(BUILD, "helpers", "contend_many"),
                               os.path.join(fs.mnt, "d"), str(files), "3600", "4"],
                              stdout=subprocess.PIPE, text=True)
        assert wl.stdout.readline().startswith("READY"), "contend_many did not start"
        out = subprocess.run([top, "-b", "-i", "1", "-n", "30", "--renew", "10",
                              "--max-inodes", str(int(files * 1.1)), "-D", fs.mnt],
                             capture_output=True, text=True, timeout=120).stdout
        cpus = sorted(float(x) for x in re.findall(r"ilocktop ([\d.]+)% of a CPU", out))
        if not cpus:
            raise SystemExit(f"{top}: no interval lines")
        return cpus[-1], statistics.median(cpus)
    finally:
        if wl:
            stop(wl)
        fs.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("tops", nargs="+", metavar="ILOCKTOP")
    args = ap.parse_args()
    got = {t: [] for t in args.tops}
    for r in range(args.runs):
        for t in (args.tops if r % 2 == 0 else args.tops[::-1]):
            top, med = one(t, args.files)
            got[t].append((top, med))
            print(f"run {r + 1}: {t}: renewal interval {top:.2f}% of a CPU, median interval "
                  f"{med:.2f}%", flush=True)
    for t in args.tops:
        print(f"{t}: renewal interval " + ", ".join(f"{a:.2f}" for a, _ in got[t]) +
              "; median interval " + ", ".join(f"{b:.2f}" for _, b in got[t]))


if __name__ == "__main__":
    main()
