#!/usr/bin/env python3
"""ilocktop builds on the screen, side by side, on the same contention.

Runs each ILOCKTOP (a path to an ilocktop binary, or any command that ends
in one and takes its flags) at -i 1 at the same time, each in a detached
tmux session of its own (a real terminal, and a session of its own as a
user's ssh login would be), while build/helpers/contend_many keeps NFILES
files of a loop-mounted XFS contended flat out. A "plain:" prefix runs that
one outside tmux, in this script's session, with its output dropped (for
batch mode: pass a wrapper that adds -b).

Once every screen shows all files tracked, measures each over ROUNDS rounds
of SECONDS: its CPU (/proc/PID/schedstat) as % of one core, its write(2)
calls per second (/proc/PID/io syscw: what reaches the terminal), its
involuntary context switches and minor page faults per second, and the
system time's share of its tick-sampled CPU. Prints each round and the
medians.

Needs root, XFS, losetup, tmux, and `make all helpers`. Creates and
removes its own image, loop device, mount and tmux sessions.

usage: scripts/bench/top_screen_ab.py [--files N] [--rounds R] [--seconds S]
                                      ILOCKTOP [ILOCKTOP...]
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
from top_cum_cpu import tmux  # noqa: E402


def proc_field(pid, name, key):
    with open(f"/proc/{pid}/{name}") as f:
        return int(re.search(rf"^{key}:\s+(\d+)", f.read(), re.M).group(1))


def stat_counts(pid):
    """Minor faults and (user, system) clock ticks so far: fields 10, 14
    and 15 of /proc/PID/stat, counted after the parenthesised comm."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[7]), (int(v[11]), int(v[12]))


def sample(pid):
    return (cpu_ns(pid), proc_field(pid, "io", "syscw"),
            proc_field(pid, "status", "nonvoluntary_ctxt_switches"), *stat_counts(pid))


def tracked(session, files):
    m = re.search(r"locks: ([\d,]+) tracked", tmux("capture-pane", "-p", "-t", session))
    return m and int(m.group(1).replace(",", "")) >= files * 0.98


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("tops", nargs="+", metavar="ILOCKTOP")
    args = ap.parse_args()
    fs = Fs()
    wl = None
    sessions, plain, pids = [], [], []
    try:
        wl = subprocess.Popen([os.path.join(BUILD, "helpers", "contend_many"),
                               os.path.join(fs.mnt, "d"), str(args.files), "3600", "4"],
                              stdout=subprocess.PIPE, text=True)
        assert wl.stdout.readline().startswith("READY"), "contend_many did not start"
        flags = ["-i", "1", "--max-inodes", str(args.files * 2), "-D", fs.mnt]
        for i, t in enumerate(args.tops):
            if t.startswith("plain:"):
                p = subprocess.Popen(t[6:].split() + flags, stdout=subprocess.DEVNULL)
                plain.append(p)
                pids.append(p.pid)
                continue
            s = f"ilock-screenab-{os.getpid()}-{i}"
            sessions.append(s)
            tmux("new-session", "-d", "-s", s, "-x", "200", "-y", "50", "env", "TERM=screen",
                 *t.split(), *flags)
            pids.append(int(tmux("display-message", "-p", "-t", s, "#{pane_pid}").strip()))
        deadline = time.monotonic() + 120
        while not all(tracked(s, args.files) for s in sessions):
            if time.monotonic() > deadline:
                raise SystemExit("timed out waiting for every screen to track all files")
            time.sleep(0.5)
        time.sleep(3)
        got = [[] for _ in pids]
        for r in range(args.rounds):
            a = [sample(p) for p in pids]
            t0 = time.monotonic()
            time.sleep(args.seconds)
            b = [sample(p) for p in pids]
            d = time.monotonic() - t0
            for i in range(len(pids)):
                # the kernel's share of the ticks (tick-sampled, so a round's is rough)
                tu, ts = (b[i][4][k] - a[i][4][k] for k in (0, 1))
                got[i].append(((b[i][0] - a[i][0]) / 1e9 / d * 100, (b[i][1] - a[i][1]) / d,
                               (b[i][2] - a[i][2]) / d, (b[i][3] - a[i][3]) / d,
                               100 * ts / (tu + ts) if tu + ts else 0.0))
            print(f"round {r + 1}: " + "; ".join(
                f"{t} {got[i][-1][0]:.2f}% {got[i][-1][1]:.0f} writes/s {got[i][-1][2]:.0f} preempted/s "
                f"{got[i][-1][3]:.0f} faults/s {got[i][-1][4]:.0f}% system"
                for i, t in enumerate(args.tops)), flush=True)
        print(f"median over {args.rounds} rounds of {args.seconds:g} s, {args.files:,} files: " +
              "; ".join(f"{t} {statistics.median(g[0] for g in got[i]):.2f}% of a core, "
                        f"{statistics.median(g[1] for g in got[i]):.0f} writes/s, "
                        f"{statistics.median(g[2] for g in got[i]):.0f} preempted/s, "
                        f"{statistics.median(g[3] for g in got[i]):.0f} minor faults/s, "
                        f"{statistics.median(g[4] for g in got[i]):.0f}% of it system time"
                        for i, t in enumerate(args.tops)))
    finally:
        for s in sessions:
            tmux("send-keys", "-t", s, "q")
        time.sleep(1)
        for s in sessions:
            tmux("kill-session", "-t", s)
        for p in plain:
            stop(p)
        if wl:
            stop(wl)
        fs.close()


if __name__ == "__main__":
    main()
