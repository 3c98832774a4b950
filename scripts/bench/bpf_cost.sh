#!/bin/sh
# BPF cost per event of each ilock program, and of empty programs on the
# same tracepoints (the floor), during the seed workload on XFS:
# fio randrw 60/40, 16k, buffered, psync, 8 threads, one 256 MiB file.
#
# usage: scripts/bench/bpf_cost.sh [ROUNDS] [SECONDS]     (as root)
# Prints per round and the median over rounds, ns/event = run_time_ns/run_cnt
# from kernel.bpf_stats_enabled. The floor and ilock alternate, one run each
# per round, so both see the same machine load.
set -eu
ROUNDS=${1:-5}
SECS=${2:-6}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ILOCK=$REPO/build/ilock
B=$REPO/build/bench
work=$(mktemp -d /tmp/ilock-bpfcost.XXXXXX)
dev=""
cleanup() {
	sysctl -q kernel.bpf_stats_enabled=0 || true
	umount "$work/mnt" 2>/dev/null || umount -l "$work/mnt" 2>/dev/null || true
	[ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all build/bench/bpfload build/bench/floor.bpf.o >/dev/null
truncate -s 1G "$work/x.img"
mkfs.xfs -q -f "$work/x.img"
dev=$(losetup --find --show "$work/x.img")
mkdir "$work/mnt"
mount "$dev" "$work/mnt"
FIO="fio --name=seed --filename=$work/mnt/ibdata1 --size=256M --rw=randrw --rwmixread=60 --bs=16k --numjobs=8 --thread --ioengine=psync"
$FIO --create_only=1 >/dev/null

stats() {  # prefix -> "name ns/event count" for our programs
	bpftool prog show -j | python3 -c "
import json, sys
for p in json.load(sys.stdin):
    n = p.get('name', '')
    if n.startswith('$1') and p.get('run_cnt'):
        print(n, round(p['run_time_ns'] / p['run_cnt']), p['run_cnt'])"
}

one() {  # condition -> lines "condition name ns count"
	case $1 in
	floor) "$B/bpfload" "$B/floor.bpf.o" $((SECS + 30)) > "$work/ready" & ;;
	ilock) "$ILOCK" stat -d $((SECS + 30)) -D "$work/mnt" > /dev/null 2> "$work/ready" & ;;
	esac
	pid=$!
	while ! grep -q 'attached\|tracing' "$work/ready" 2>/dev/null; do sleep 0.05; done
	sysctl -q kernel.bpf_stats_enabled=1
	$FIO --time_based --runtime="$SECS" >/dev/null
	case $1 in floor) stats floor_ ;; ilock) stats "" | grep -E '_(btf|raw)$' ;; esac | sed "s/^/$1 /"
	sysctl -q kernel.bpf_stats_enabled=0
	kill -INT "$pid"; wait "$pid" 2>/dev/null || true
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	one floor; one ilock
done > "$work/all"
python3 - "$work/all" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cond, name, ns, cnt = line.split()
    rows[(cond, name)].append(int(ns))
floor = {n.replace("floor_", ""): statistics.median(v) for (c, n), v in rows.items() if c == "floor"}
print(f"{'program':28s} {'median ns/ev':>12s} {'min-max':>12s} {'floor':>6s} {'above floor':>12s}")
for (c, n), v in sorted(rows.items()):
    if c != "ilock":
        continue
    base = n.rsplit("_", 1)[0]
    f = floor.get(base)
    m = statistics.median(v)
    print(f"{n:28s} {m:12.0f} {min(v):5d}-{max(v):<6d} {f if f is not None else '-':>6} "
          f"{(m - f) if f is not None else float('nan'):12.0f}")
PY
