#!/bin/sh
# What `ilock export` costs: its own CPU, the collection time (map read +
# fold + both renderings), scrape latency and exposition size, while the
# seed workload runs on a loop XFS and 1,000 more inodes have contended.
#
# usage: scripts/bench/export_cost.sh [ROUNDS] [SECONDS]     (as root)
#
# Per round, and for --interval 1 and 5 in turn (so both see the same
# machine load): start the exporter on 127.0.0.1, make 1,000 files wait once
# each (lockhold), run fio's seed workload (randrw 60/40, 16k, buffered,
# psync, 8 threads) for SECONDS, and scrape /metrics every second with the
# OpenMetrics Accept header, as Prometheus does. Prints each run, then the
# medians over rounds and the 1 s / 5 s ratio.
set -eu
ROUNDS=${1:-3}
SECS=${2:-20}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/ilock-exportcost.XXXXXX)
. "$REPO/scripts/bench/seed_fs.sh"
cleanup() {
	[ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done < "$work/pids"
	sleep 0.5
	seed_fs_remove "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all helpers >/dev/null
bench_fs_make "$work"

REPO=$REPO WORK=$work ROUNDS=$ROUNDS SECS=$SECS python3 - <<'EOF'
import http.client, json, os, re, statistics, subprocess, sys, time

repo, work = os.environ["REPO"], os.environ["WORK"]
rounds, secs = int(os.environ["ROUNDS"]), int(os.environ["SECS"])
ilock, lh = f"{repo}/build/ilock", f"{repo}/build/helpers/lockhold"
mnt = f"{work}/mnt"
hz = os.sysconf("SC_CLK_TCK")
OM = {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"}


def track(p):
    with open(f"{work}/pids", "a") as f:
        f.write(f"{p.pid}\n")
    return p


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / hz  # utime + stime


def get(port, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    t0 = time.perf_counter()
    c.request("GET", "/metrics", headers=headers or {})
    r = c.getresponse()
    body = r.read()
    took = time.perf_counter() - t0
    c.close()
    return r.status, body.decode(), took


def metric(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def contend(files):
    """One real wait per file: a held writer and a reader behind it.
    Files whose reader did not block (a loaded machine) are tried again."""
    todo = list(files)
    for _ in range(4):
        missed = []
        for b in range(0, len(todo), 200):
            part = todo[b:b + 200]
            ws = [subprocess.Popen([lh, "write", f, "0", "4096", "800"], stdout=subprocess.PIPE,
                                   text=True) for f in part]
            for w in ws:
                w.stdout.readline()
            rs = [subprocess.Popen([lh, "read", f, "4096", "4096", "1"], stdout=subprocess.PIPE,
                                   text=True) for f in part]
            outs = [r.communicate()[0] for r in rs]
            for w in ws:
                w.wait()
                w.stdout.close()
            missed += [f for f, o in zip(part, outs)
                       if min(json.loads(o)["blocked_ns"]) < 20_000_000]
        todo = missed
        if not todo:
            return


os.makedirs(f"{mnt}/many", exist_ok=True)
files = []
for i in range(1000):
    p = f"{mnt}/many/f{i:04d}"
    with open(p, "wb") as f:
        f.write(b"x" * 8192)
    files.append(p)
seed = f"{mnt}/ibdata1"
subprocess.run(["fio", "--name=seed", f"--filename={seed}", "--size=256M", "--create_only=1"],
               check=True, stdout=subprocess.DEVNULL)


def run(interval):
    ex = track(subprocess.Popen([ilock, "export", "--listen", "127.0.0.1:0", "-i", str(interval),
                                 "-D", mnt], stderr=subprocess.PIPE, text=True))
    line = ex.stderr.readline()
    port = int(re.search(r":(\d+)/metrics", line).group(1))
    while get(port)[0] != 200:
        time.sleep(0.1)
    contend(files)
    fio = track(subprocess.Popen(
        ["fio", "--name=seed", f"--filename={seed}", "--size=256M", "--rw=randrw",
         "--rwmixread=60", "--bs=16k", "--numjobs=8", "--thread", "--ioengine=psync",
         "--time_based", f"--runtime={secs + 5}"], stdout=subprocess.DEVNULL))
    time.sleep(3)  # fio warm-up
    _, text0, _ = get(port, OM)
    c0, t0 = cpu_s(ex.pid), time.monotonic()
    lat = []
    size = 0
    nsamples = 0
    while time.monotonic() - t0 < secs:
        st, text, took = get(port, OM)
        assert st == 200
        lat.append(took)
        size = len(text)
        nsamples = sum(1 for l in text.splitlines() if l and not l.startswith("#"))
        time.sleep(max(0.0, 1.0 - took))
    c1, t1 = cpu_s(ex.pid), time.monotonic()
    _, text1, _ = get(port, OM)
    fio.wait()
    ex.terminate()
    ex.wait(timeout=10)
    ncoll = metric(text1, "ilock_exporter_collections_total") - metric(text0, "ilock_exporter_collections_total")
    coll_s = metric(text1, "ilock_exporter_collect_seconds_total") - metric(text0, "ilock_exporter_collect_seconds_total")
    bpf_s = metric(text1, "ilock_bpf_run_seconds_total") - metric(text0, "ilock_bpf_run_seconds_total")
    return {
        "cpu_pct": 100 * (c1 - c0) / (t1 - t0),
        "collect_ms": 1000 * coll_s / ncoll if ncoll else float("nan"),
        "scrape_ms_p50": 1000 * statistics.median(lat),
        "scrape_ms_max": 1000 * max(lat),
        "bpf_pct": 100 * bpf_s / (t1 - t0),
        "kbytes": size / 1024,
        "samples": nsamples,
        "inodes": metric(text1, "ilock_contended_inodes"),
    }


cols = ["cpu_pct", "collect_ms", "scrape_ms_p50", "scrape_ms_max", "bpf_pct", "kbytes",
        "samples", "inodes"]
print(f"{'round':>5} {'-i':>3} " + " ".join(f"{c:>13}" for c in cols))
res = {1: [], 5: []}
for r in range(rounds):
    for interval in (1, 5):
        m = run(interval)
        res[interval].append(m)
        print(f"{r + 1:>5} {interval:>3} " + " ".join(f"{m[c]:>13.3f}" for c in cols), flush=True)
print("median:")
med = {}
for interval in (1, 5):
    med[interval] = {c: statistics.median(x[c] for x in res[interval]) for c in cols}
    print(f"{'':>5} {interval:>3} " + " ".join(f"{med[interval][c]:>13.3f}" for c in cols))
print(f"exporter CPU ratio -i 1 / -i 5: {med[1]['cpu_pct'] / med[5]['cpu_pct']:.2f}")
EOF
