#!/bin/sh
# Cost of the operation sources (issue 5, docs/ranges.md):
#  1. BPF ns per I/O event of each op program (run_time_ns / run_cnt with
#     kernel.bpf_stats_enabled), and of empty programs on the same
#     tracepoints (the floor), during fio on XFS and ext4: the seed workload
#     (randrw 60/40, 16k, buffered, psync, 8 threads, one 256 MiB file) and
#     its O_DIRECT twin. ilock runs with --ops=all here so that the optional
#     page-cache source (mm_filemap_get_pages) is measured too.
#  2. IOPS of the seed workload on XFS with no tracer, with `ilock stat
#     --ops=off` and with `ilock stat` (default ops), bpf_stats off.
#
# usage: scripts/bench/ops_cost.sh [ROUNDS] [SECONDS]      (as root)
# Conditions alternate within each round so that all see the same load;
# the figures are medians over rounds.
set -eu
ROUNDS=${1:-5}
SECS=${2:-6}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ILOCK=$REPO/build/ilock
B=$REPO/build/bench
work=$(mktemp -d /tmp/ilock-opscost.XXXXXX)
devs=""
cleanup() {
	sysctl -q kernel.bpf_stats_enabled=0 || true
	for m in "$work"/mnt-*; do
		[ -d "$m" ] && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
	done
	for d in $devs; do losetup -d "$d" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all build/bench/bpfload >/dev/null
clang -g -O2 -target bpf -mcpu=v3 -I"$REPO/bpf" -I"$REPO/include" \
	-I/usr/include/"$(gcc -print-multiarch)" -c "$REPO/scripts/bench/ops_floor.bpf.c" \
	-o "$B/ops_floor.bpf.o"

mkfs() {  # fstype -> mountpoint
	truncate -s 1G "$work/$1.img"
	case $1 in
	xfs) mkfs.xfs -q -f "$work/$1.img" ;;
	ext4) mkfs.ext4 -q -F "$work/$1.img" ;;
	esac
	d=$(losetup --find --show "$work/$1.img")
	devs="$devs $d"
	mkdir "$work/mnt-$1"
	mount "$d" "$work/mnt-$1"
	echo "$work/mnt-$1"
}
XFS=$(mkfs xfs)
EXT4=$(mkfs ext4)

fio_cmd() {  # mount direct -> fio command (seed workload)
	echo "fio --name=seed --filename=$1/ibdata1 --size=256M --rw=randrw --rwmixread=60" \
	     "--bs=16k --numjobs=8 --thread --ioengine=psync --direct=$2"
}
for m in "$XFS" "$EXT4"; do $(fio_cmd "$m" 0) --create_only=1 >/dev/null; done

prog_ids() { bpftool prog show -j | python3 -c "import json,sys; print(*[p['id'] for p in json.load(sys.stdin)])"; }

# Our tracer's programs only: other tracers (tests running beside us) load
# programs of the same names. Ours are the ones that appeared with it.
stats() {  # prefix -> "name run_time_ns run_cnt" of our programs with that prefix
	bpftool prog show -j | python3 -c "
import json, sys
before = set(map(int, open('$work/ids').read().split()))
for p in json.load(sys.stdin):
    n = p.get('name', '')
    if p['id'] not in before and n.startswith('$1') and p.get('run_cnt'):
        print(n, p['run_time_ns'], p['run_cnt'])"
}

start_bg() {  # condition mount -> pid of the tracer (waits until attached)
	prog_ids > "$work/ids"
	case $1 in
	floor) "$B/bpfload" "$B/ops_floor.bpf.o" $((SECS + 60)) > "$work/ready" & ;;
	ilock) "$ILOCK" stat --ops=all -d $((SECS + 60)) -D "$2" > /dev/null 2> "$work/ready" & ;;
	off) "$ILOCK" stat --ops=off -d $((SECS + 60)) -D "$2" > /dev/null 2> "$work/ready" & ;;
	dflt) "$ILOCK" stat -d $((SECS + 60)) -D "$2" > /dev/null 2> "$work/ready" & ;;
	esac
	pid=$!
	while ! grep -q 'attached\|tracing' "$work/ready" 2>/dev/null; do sleep 0.05; done
}

cost() {  # condition workload mount direct -> lines "workload condition prog ns count"
	start_bg "$1" "$3"
	sysctl -q kernel.bpf_stats_enabled=1
	$(fio_cmd "$3" "$4") --time_based --runtime="$SECS" >/dev/null
	case $1 in floor) stats opfloor_ ;; ilock) stats op_ ;; esac | sed "s/^/$2 $1 /"
	sysctl -q kernel.bpf_stats_enabled=0
	kill -INT "$pid"; wait "$pid" 2>/dev/null || true
}

iops() {  # condition -> "iops condition N"
	pid=""
	[ "$1" != none ] && start_bg "$1" "$XFS"
	n=$($(fio_cmd "$XFS" 0) --time_based --runtime="$SECS" --output-format=json |
		python3 -c "import json,sys; j=json.load(sys.stdin)['jobs']; \
print(round(sum(x['read']['iops'] + x['write']['iops'] for x in j)))")
	[ -n "$pid" ] && { kill -INT "$pid"; wait "$pid" 2>/dev/null || true; }
	echo "iops $1 $n"
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds of ${SECS}s"
for r in $(seq "$ROUNDS"); do
	for w in "xfs-buffered $XFS 0" "ext4-buffered $EXT4 0" "xfs-direct $XFS 1" "ext4-direct $EXT4 1"; do
		set -- $w
		cost floor "$1" "$2" "$3"
		cost ilock "$1" "$2" "$3"
	done
	for c in none off dflt; do iops $c; done
done > "$work/all"

python3 - "$work/all" <<'PY'
import sys, statistics, collections
cost = collections.defaultdict(list)     # (workload, cond, base) -> [ns/event]
events = collections.defaultdict(list)   # (workload, base) -> [events/s-ish counts]
tot = collections.defaultdict(list)      # (workload, cond) -> [total ns / total events]
iops = collections.defaultdict(list)
rounds = collections.defaultdict(lambda: [0, 0])
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "iops":
        iops[f[1]].append(int(f[2]))
        continue
    w, cond, name, ns, cnt = f[0], f[1], f[2], int(f[3]), int(f[4])
    base = name.split("_", 1)[1]
    cost[(w, cond, base)].append(ns / cnt)
    if cond == "ilock":
        events[(w, base)].append(cnt)
print("\nBPF cost per I/O event (median over rounds of run_time_ns/run_cnt)")
print(f"{'workload':14s} {'source':28s} {'events':>9s} {'ilock ns':>9s} {'floor ns':>9s} {'above':>7s}")
for w in ("xfs-buffered", "ext4-buffered", "xfs-direct", "ext4-direct"):
    for (ww, cond, base), v in sorted(cost.items()):
        if ww != w or cond != "ilock":
            continue
        m = statistics.median(v)
        fl = cost.get((w, "floor", base))
        f = statistics.median(fl) if fl else None
        n = statistics.median(events[(w, base)])
        fs = "-" if f is None else str(round(f))
        above = "-" if f is None else str(round(m - f))
        print(f"{w:14s} {base:28s} {n:9.0f} {m:9.0f} {fs:>9s} {above:>7s}")
print("\nIOPS of the seed workload on XFS (median over rounds)")
base = statistics.median(iops["none"])
for c, label in (("none", "no tracer"), ("off", "ilock stat --ops=off"), ("dflt", "ilock stat")):
    m = statistics.median(iops[c])
    print(f"{label:24s} {m:9.0f}  {m / base * 100:6.1f}%   runs: {' '.join(map(str, iops[c]))}")
PY
