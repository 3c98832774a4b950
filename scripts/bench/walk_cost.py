#!/usr/bin/env python3
"""What the walk for waits in progress costs each read, by thread count.

Every read of `ilock stat -i`, ilocktop and the exporter runs the task
iterator of bpf/waiting.bpf.c once over every thread on the host. This
runs

    BIN stat -j -i INTERVAL -d SECONDS

for two builds in turn (A: with the walk, B: a build without it, e.g. the
commit before), ROUNDS times each, while a helper process keeps THREADS
idle threads alive, and reports the CPU (user + system, from wait4) per
read of each build and their difference: the walk's cost per read at that
many threads, side by side on the same machine, medians of the rounds.

usage: scripts/bench/walk_cost.py A_BIN B_BIN [--threads 0,2000,8000]
                                  [--rounds 5] [--seconds 5] [--interval 0.05]
"""

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

SLEEPER = r"""
import os, sys, threading
n = int(sys.argv[1])
ev = threading.Event()
threading.stack_size(64 * 1024)
for _ in range(n):
    threading.Thread(target=ev.wait, daemon=True).start()
print("READY", flush=True)
sys.stdin.read()
"""


def host_threads():
    return sum(len(os.listdir(f"/proc/{p}/task")) for p in os.listdir("/proc")
               if p.isdigit() and os.path.isdir(f"/proc/{p}/task"))


def one_run(binary, seconds, interval):
    """CPU seconds of one `stat -i` run and how many reads it made."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([binary, "stat", "-j", "-i", str(interval), "-d", str(seconds)],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       timeout=seconds + 120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"walk_cost: {binary} exited {p.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reads = p.stdout.count('"version":')
    return cpu, max(reads, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a_bin")
    ap.add_argument("b_bin")
    ap.add_argument("--threads", default="0,2000,8000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--interval", type=float, default=0.05)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("walk_cost: needs root")

    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f}; A={args.a_bin} B={args.b_bin}")
    print(f"{'threads':>8} {'A us/read':>10} {'B us/read':>10} {'A-B us/read':>12} "
          f"{'pairs (A-B)':>30}")
    for n in [int(x) for x in args.threads.split(",")]:
        sl = None
        if n:
            sl = subprocess.Popen([sys.executable, "-c", SLEEPER, str(n)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            if sl.stdout.readline().strip() != "READY":
                raise SystemExit("walk_cost: the sleeper did not start")
        try:
            total = host_threads()
            a, b = [], []
            for r in range(args.rounds):
                # alternate the order, so neither build always runs second
                order = [("a", args.a_bin), ("b", args.b_bin)]
                if r % 2:
                    order.reverse()
                for tag, binary in order:
                    cpu, reads = one_run(binary, args.seconds, args.interval)
                    (a if tag == "a" else b).append(cpu / reads * 1e6)
            diffs = [x - y for x, y in zip(a, b)]
            print(f"{total:>8} {statistics.median(a):>10.1f} {statistics.median(b):>10.1f} "
                  f"{statistics.median(diffs):>12.1f} "
                  f"{' '.join(f'{d:.0f}' for d in sorted(diffs)):>30}", flush=True)
        finally:
            if sl:
                sl.stdin.close()
                sl.send_signal(signal.SIGTERM)
                sl.wait(timeout=30)


if __name__ == "__main__":
    main()
