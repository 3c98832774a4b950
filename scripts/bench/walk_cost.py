#!/usr/bin/env python3
"""What the walk for waits in progress costs each read, by thread count.

A read of `ilock stat -i`, ilocktop or the exporter runs the task
iterator of bpf/waiting.bpf.c once over every thread on the host, when
some wait has begun and not ended (otherwise it skips the walk). This
runs, on an idle host,

    BIN stat -j -i INTERVAL -d SECONDS

in two settings in turn: A with ILOCK_WALK_ALWAYS=1 (the walk at every
read), B without (no wait in flight: no walk), ROUNDS times each, while a
helper process keeps THREADS idle threads alive. Each measurement is
taken once tracing runs: the on-CPU time of all of ilock's threads
(/proc/PID/task/*/schedstat) over SECONDS, divided by the reads due in
that time (SECONDS / INTERVAL), so loading the BPF programs is left out. It reports A and B per read and their
difference: the walk's cost per read at that many threads, side by side,
medians of the rounds. BIN_B (optional) runs setting B with another
binary (the build before the walk existed, to show B costs it nothing).

usage: scripts/bench/walk_cost.py BIN [BIN_B] [--threads 0,2000,8000]
                                  [--rounds 5] [--seconds 10] [--interval 0.05]
"""

import argparse
import os
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


def cpu_ns(pid):
    """On-CPU time of every thread of pid so far (schedstat), in ns."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def per_read(binary, seconds, interval, walk):
    """CPU per read in microseconds, measured once tracing runs (not loading)."""
    env = dict(os.environ)
    env.pop("ILOCK_WALK_ALWAYS", None)
    if walk:
        env["ILOCK_WALK_ALWAYS"] = "1"
    p = subprocess.Popen([binary, "stat", "-j", "-i", str(interval)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stderr.readline()
        if "ilock: tracing" not in line:
            raise SystemExit(f"walk_cost: {binary} did not start: {line.strip()}")
        time.sleep(1)  # past the first reads
        c0, t0 = cpu_ns(p.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_ns(p.pid), time.monotonic()
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
    return (c1 - c0) / 1e3 / ((t1 - t0) / interval)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("bin_b", nargs="?")
    ap.add_argument("--threads", default="0,2000,8000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--interval", type=float, default=0.05)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("walk_cost: needs root")

    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f}; A={args.bin} walking at every read, "
          f"B={args.bin_b or args.bin} not walking")
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
                order = [("a", args.bin, True), ("b", args.bin_b or args.bin, False)]
                if r % 2:
                    order.reverse()
                for tag, binary, walk in order:
                    us = per_read(binary, args.seconds, args.interval, walk)
                    (a if tag == "a" else b).append(us)
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
