#!/usr/bin/env python3
"""Summarise the --holds=all cost benchmark (tests/kernels/bench_holds.sh).

    bench_report.py SERIES=CONSOLE_LOG...

Per kernel and workload: the median throughput over the rounds with no
ilock, with `ilock stat`, and with `ilock stat --holds=all`, and the median
over rounds of each round's ratio to its own no-ilock run (the modes run
back to back in each round, so a ratio compares like with like on a noisy
machine). Then the BPF run time per program run from the stats pass.
"""

import json
import re
import statistics
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check import parse_console  # noqa: E402

WORKLOADS = ("xfs", "ext4", "faults")
MODES = ("none", "default", "holds")
OURS = re.compile(r"^(hold_|slow_|contention_|xfs_)")


def kv(line):
    return dict(p.split("=", 1) for p in line.split() if "=" in p)


def report(series, path):
    text = open(path, errors="replace").read()
    blocks, notes = parse_console(text)
    runs = {m: {w: [] for w in WORKLOADS} for m in MODES}
    secs = None
    errors = [n for n in notes if "error" in n]
    for n in notes:
        if n.startswith("bench round="):
            d = kv(n)
            secs = int(d["secs"])
            for w in WORKLOADS:
                runs[d["mode"]][w].append(int(d[w]))
    kernel = next((n.split()[1] for n in notes if n.startswith("kernel ")), series)
    print(f"\n### {kernel}\n")
    if errors or "all done" not in notes:
        print("incomplete run: " + "; ".join(errors or ["guest did not finish"]))
        return False
    nrounds = len(runs["none"]["xfs"])
    print(f"Medians of {nrounds} rounds of {secs} guest seconds (qemu -icount: 1 ns per guest "
          "instruction): ops/s, and (median of the per-round ratios to no ilock):\n")
    print("| workload | no ilock | ilock stat | ilock stat --holds=all |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        cells = []
        for m in MODES:
            v = statistics.median(runs[m][w]) / secs
            ratio = statistics.median(a / b for a, b in zip(runs[m][w], runs["none"][w]) if b)
            cells.append(f"{v:,.0f}" + ("" if m == "none" else f" ({ratio:.2f})"))
        print(f"| {w} | " + " | ".join(cells) + " |")
    print("\nAll rounds:\n\n```")
    for m in MODES:
        for w in WORKLOADS:
            print(f"{m:8} {w:7} " + " ".join(str(v) for v in runs[m][w]))
    print("```")
    for m in ("default", "holds"):
        try:
            progs = json.loads(blocks.get(f"progs.{m}", "[]"))
        except ValueError:
            continue
        stats = next((kv(n) for n in notes if n.startswith(f"bench stats mode={m} ")), {})
        print(f"\nBPF run time with {'--holds=all' if m == 'holds' else 'the default strategy'}"
              f" (stats pass; workloads {', '.join(f'{w}={stats.get(w)}' for w in WORKLOADS)}):\n")
        print("| program | runs | guest instructions/run |")
        print("|---|---|---|")
        total_ns = 0
        for p in sorted(progs, key=lambda p: -p.get("run_time_ns", 0)):
            name = p.get("name", "")
            if not OURS.match(name) or not p.get("run_cnt"):
                continue
            total_ns += p["run_time_ns"]
            print(f"| {name} | {p['run_cnt']:,} | {p['run_time_ns'] / p['run_cnt']:.0f} |")
        print(f"| all | | {total_ns / 1e9:.2f} of {3 * secs} guest seconds in BPF |")
    return True


def main(argv):
    ok = True
    for a in argv:
        series, path = a.split("=", 1)
        ok &= report(series, path)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
