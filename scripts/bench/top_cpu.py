#!/usr/bin/env python3
"""ilocktop's own CPU with 10,000 tracked inodes, at -i 1.

Makes real contention on NFILES distinct files of a loop-mounted XFS
(build/helpers/contend_many: per file, a writer holds the IOLOCK through a
userfaultfd-stalled buffered write while a reader queues behind it, so
every file gets a real shared wait), runs

    ilocktop -b -i 1 -n ITER -D MNT

against it and measures ilocktop's CPU (user + system, all of it: map reads
are system time) from /proc/PID/schedstat, in ns:

  steady: from the first interval whose table says NFILES locks are
          tracked, to the last one (the target: <= 1% of one core);
  total:  the whole run from exec, by wait4 (includes loading and
          verifying the BPF programs).

The workload's first pass goes flat out (all files get their first wait in
a second or two), then it keeps PACE files per second contended: PACE=0
means flat out all along (every tracked inode active every interval, the
worst case); "idle" stops it once all files are tracked. Each (pace) is run RUNS times; medians are reported, with
`ilock stat -i 1` (which rebuilds full snapshots every interval) measured
the same way as a side-by-side reference.

Needs root, XFS, losetup, and `make all helpers`. Creates and removes its
own image, loop device and mount, even on failure.

usage: scripts/bench/top_cpu.py [--files N] [--runs R] [--iterations N]
                                [--paces idle,100,1000,0] [--lanes L] [--no-stat]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "build")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout.strip()


TICK = os.sysconf("SC_CLK_TCK")


def cpu_ns(pid):
    """On-CPU time of a single-threaded process, ns (schedstat field 1)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def user_sys_s(pid):
    """utime and stime in seconds (tick resolution) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


class Fs:
    def __init__(self, size="2G"):
        self.dir = tempfile.mkdtemp(prefix="ilock-topbench-")
        self.img = os.path.join(self.dir, "xfs.img")
        self.mnt = os.path.join(self.dir, "mnt")
        self.dev = None
        self.mounted = False
        os.mkdir(self.mnt)
        run(["truncate", "-s", size, self.img])
        run(["mkfs.xfs", "-q", "-f", self.img])
        self.dev = run(["losetup", "--find", "--show", self.img])
        run(["mount", "-t", "xfs", self.dev, self.mnt])
        self.mounted = True

    def close(self):
        if self.mounted:
            for _ in range(10):
                if subprocess.run(["umount", self.mnt]).returncode == 0:
                    break
                time.sleep(0.5)
            else:
                subprocess.run(["umount", "-l", self.mnt])
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev])
        shutil.rmtree(self.dir, ignore_errors=True)


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def one_run(args, fs, tool, pace):
    """Run the tool once against a fresh workload; returns a dict."""
    workdir = os.path.join(fs.mnt, "d")
    if tool == "ilocktop":
        cmd = [os.path.join(BUILD, "ilocktop"), "-b", "-i", "1", "-n", str(args.iterations),
               "-D", fs.mnt]
        header = re.compile(r"^--- interval (\d+) ---")
        tracked = re.compile(r"locks: ([\d,]+) tracked")
    else:
        cmd = [os.path.join(BUILD, "ilock"), "stat", "-i", "1", "-d", str(args.iterations + 0.5),
               "-D", fs.mnt]
        header = re.compile(r"^--- interval (\d+):")
        tracked = None
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         bufsize=1)
    work = None
    marks = []          # (interval, monotonic, cpu ns, tracked so far, (user s, sys s))
    own = []            # ilocktop's own "ilocktop X% of a CPU"
    bpf = []
    n_tracked = 0
    try:
        for line in p.stdout:
            m = header.match(line)
            if m:
                i = int(m.group(1))
                marks.append((i, time.monotonic(), cpu_ns(p.pid), n_tracked, user_sys_s(p.pid)))
                if work is None:
                    # tracing: now give it the inodes to track
                    wcmd = [os.path.join(BUILD, "helpers", "contend_many"), workdir,
                            str(args.files), str(args.iterations + 30), str(args.lanes)]
                    if pace not in (0, "idle"):
                        wcmd.append(str(pace))
                    work = subprocess.Popen(wcmd, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
                continue
            if tracked:
                m = tracked.search(line)
                if m:
                    n_tracked = int(m.group(1).replace(",", ""))
                    marks[-1] = marks[-1][:3] + (n_tracked,) + marks[-1][4:]
                    if pace == "idle" and n_tracked >= args.files and work.poll() is None:
                        # all tracked: from now on no inode lock waits at all
                        stop(work)
                m = re.search(r"ilocktop ([\d.]+)% of a CPU", line)
                if m:
                    own.append(float(m.group(1)))
                m = re.search(r"cost: BPF ([\d.]+) (ns|us|ms|s)/s", line)
                if m:
                    mult = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
                    bpf.append(float(m.group(1)) * mult)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        stop(p)
        if work:
            stop(work)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}")
    total_cpu = ru.ru_utime + ru.ru_stime
    wall = time.monotonic() - t0
    # steady: from the first table that tracks them all (ilock stat: after
    # a 4 s warm-up, more than ilocktop needs), to the last table
    if tracked:
        full = [m for m in marks if m[3] >= args.files]
        if len(full) < 5:
            raise SystemExit(f"only {len(full)} intervals tracked {args.files} inodes "
                             f"(max {max(m[3] for m in marks)}): workload too slow?")
        first, last = full[0], marks[-1]
    else:
        first, last = marks[min(4, len(marks) - 2)], marks[-1]
    secs = last[1] - first[1]
    steady = (last[2] - first[2]) / 1e9 / secs * 100
    user = (last[4][0] - first[4][0]) / secs * 100
    sys_ = (last[4][1] - first[4][1]) / secs * 100
    return {"steady": steady, "user": user, "sys": sys_,
            "total": total_cpu / wall * 100, "secs": secs,
            "own": statistics.median(own[-10:]) if own else None,
            "bpf": statistics.median(bpf[-10:]) if bpf else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--paces", default="idle,100,1000,0",
                    help="files contended per second after the first pass; 0: flat out; "
                         "idle: none (the workload stops once all are tracked)")
    ap.add_argument("--lanes", type=int, default=4)
    ap.add_argument("--no-stat", action="store_true", help="skip the ilock stat reference")
    ap.add_argument("--build", help="the build directory whose ilocktop and ilock run "
                    "(default: this checkout's build/), to compare two builds")
    args = ap.parse_args()
    global BUILD
    if args.build:
        BUILD = os.path.abspath(args.build)
    if os.geteuid() != 0:
        raise SystemExit("top_cpu: needs root (BPF, loop devices)")
    for b in ("ilocktop", "ilock", "helpers/contend_many"):
        if not os.access(os.path.join(BUILD, b), os.X_OK):
            raise SystemExit(f"top_cpu: build/{b} missing: run make all helpers")

    paces = [x if x == "idle" else int(x) for x in args.paces.split(",")]
    print(f"# {args.files} files, {args.runs} runs x {args.iterations} intervals of 1 s, "
          f"{args.lanes} lanes; kernel {os.uname().release}, {os.cpu_count()} CPUs")
    results = {}
    fs = Fs()
    try:
        # create the files once; every run starts a fresh ilocktop anyway
        run([os.path.join(BUILD, "helpers", "contend_many"), os.path.join(fs.mnt, "d"),
             str(args.files), "1", str(args.lanes)])
        tools = ["ilocktop"] + ([] if args.no_stat else ["stat"])
        for pace in paces:
            for tool in tools:
                rs = []
                for i in range(args.runs):
                    r = one_run(args, fs, tool, pace)
                    rs.append(r)
                    print(f"pace={pace or 'max'} {tool:8} run {i + 1}: steady {r['steady']:.3f}% "
                          f"(user {r['user']:.2f}%, sys {r['sys']:.2f}%) over {r['secs']:.0f} s, "
                          f"total {r['total']:.3f}%"
                          + (f", self-reported {r['own']:.2f}%" if r["own"] is not None else "")
                          + (f", BPF {r['bpf']:.1f} ms/s" if r["bpf"] is not None else ""),
                          flush=True)
                results[(pace, tool)] = rs
    finally:
        fs.close()

    print("\n| workload after the first pass | tool | steady CPU, median (min-max) | "
          "of which user / sys | whole run incl. BPF load |")
    print("|---|---|---|---|---|")
    for (pace, tool), rs in results.items():
        st = [r["steady"] for r in rs]
        tot = [r["total"] for r in rs]
        us = statistics.median(r["user"] for r in rs)
        sy = statistics.median(r["sys"] for r in rs)
        name = "ilocktop -b -i 1" if tool == "ilocktop" else "ilock stat -i 1 (reference)"
        load = ("none (all tracked, no new waits)" if pace == "idle" else
                f"{pace} files/s" if pace else "flat out (all files, every interval)")
        print(f"| {load} | {name} | {statistics.median(st):.2f}% ({min(st):.2f}-{max(st):.2f}) | "
              f"{us:.2f}% / {sy:.2f}% | {statistics.median(tot):.2f}% |")
    for pace in paces:
        if (pace, "stat") in results:
            a = statistics.median(r["steady"] for r in results[(pace, "ilocktop")])
            b = statistics.median(r["steady"] for r in results[(pace, "stat")])
            print(f"\npace {pace or 'max'}: ilock stat / ilocktop = {b / a:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
