#!/bin/sh
# What `ilock export --renew` costs, and whether what it keeps stays small:
# the exporter runs with small tables (--max-inodes 64, --renew 10) while
# contend_many makes every one of NFILES files wait, pass after pass, so
# that the tables fill again and again.
#
# usage: scripts/bench/export_renew.sh [SECONDS] [NFILES]     (as root)
#
# Every second: the exporter's resident memory and open descriptors, and
# one scrape (renewals so far, the last collection's duration, the number
# of samples). Prints the exporter's line for each renewal, which gives
# its wall time and the CPU of the renewing thread (most of it the
# verifier's, in the kernel), their medians, the median collection time
# before the first renewal and after the last, and memory, samples and
# descriptors at each renewal: none may grow with the renewals (what is
# retired is compacted, the old tracer closed).
set -eu
SECS=${1:-90}
NFILES=${2:-400}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/ilock-exportrenew.XXXXXX)
. "$REPO/scripts/bench/seed_fs.sh"
cleanup() {
	[ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done < "$work/pids"
	sleep 0.5
	seed_fs_remove "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all helpers >/dev/null
bench_fs_make "$work"

REPO=$REPO WORK=$work SECS=$SECS NFILES=$NFILES python3 - <<'EOF'
import http.client, os, re, statistics, subprocess, time

repo, work = os.environ["REPO"], os.environ["WORK"]
secs, nfiles = int(os.environ["SECS"]), int(os.environ["NFILES"])
hz = os.sysconf("SC_CLK_TCK")
page = os.sysconf("SC_PAGE_SIZE")


def track(p):
    with open(f"{work}/pids", "a") as f:
        f.write(f"{p.pid}\n")
    return p


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / hz


def rss_mb(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * page / 2**20


def scrape(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    body = c.getresponse().read().decode()
    c.close()
    return body


def metric(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


ex = track(subprocess.Popen([f"{repo}/build/ilock", "export", "--listen", "127.0.0.1:0", "-i", "1",
                             "--max-inodes", "64", "--renew", "10", "-D", f"{work}/mnt"],
                            stderr=subprocess.PIPE, text=True))
line = ex.stderr.readline()
port = int(re.search(r":(\d+)/metrics", line).group(1))
time.sleep(2)
cm = track(subprocess.Popen([f"{repo}/build/helpers/contend_many", f"{work}/mnt/many", str(nfiles),
                             str(secs), "2", "20"], stdout=subprocess.DEVNULL))
rows = []  # (t, cpu, rss, renewals, last collect s, samples, failures, open fds)
t0 = time.monotonic()
while cm.poll() is None:
    time.sleep(1)
    text = scrape(port)
    rows.append((time.monotonic() - t0, cpu_s(ex.pid), rss_mb(ex.pid),
                 int(metric(text, "ilock_table_renewals_total")),
                 metric(text, "ilock_exporter_last_collect_duration_seconds"),
                 sum(1 for l in text.splitlines() if l and not l.startswith("#")),
                 int(metric(text, "ilock_table_renewal_failures_total")),
                 len(os.listdir(f"/proc/{ex.pid}/fd"))))
ex.terminate()
err = ex.communicate(timeout=30)[1]
took = []
for l in err.splitlines():
    if "fresh tables" in l:
        print(l)
        m = re.search(r"\(renewal \d+, ([\d.]+) s, ([\d.]+) s of CPU\)", l)
        if m:
            took.append((float(m.group(1)), float(m.group(2))))
if took:
    print(f"per renewal, as the exporter logs it: median {statistics.median(t[0] for t in took):.2f} s "
          f"[{min(t[0] for t in took):.2f}-{max(t[0] for t in took):.2f}], "
          f"median {statistics.median(t[1] for t in took):.3f} s of CPU "
          f"[{min(t[1] for t in took):.3f}-{max(t[1] for t in took):.3f}]")
n = rows[-1][3]
print(f"seconds sampled {len(rows)}, renewals {n}, failed tries {rows[-1][6]}")
before = [r[4] for r in rows if r[3] == 0]
after = [r[4] for r in rows if r[3] == n and n]
if before and after:
    print(f"collection: median {statistics.median(before) * 1000:.2f} ms before the first "
          f"renewal, {statistics.median(after) * 1000:.2f} ms after the last")
print("at each renewal (seconds in, resident MB, samples exported, open fds):")
for a, b in zip(rows, rows[1:]):
    if b[3] > a[3]:
        print(f"  renewal {b[3]:3d}  t={b[0]:5.1f} s  rss {b[2]:6.1f} MB  samples {b[5]}  "
              f"fds {b[7]}")
print(f"at the end: rss {rows[-1][2]:.1f} MB, samples {rows[-1][5]}, fds {rows[-1][7]}; "
      f"exporter CPU {rows[-1][1]:.2f} s in all")
EOF
