#!/bin/sh
# Cost of the operation sources (issue 5, docs/ranges.md), as root:
#
#   scripts/bench/ops_cost.sh [ROUNDS] [SECONDS]
#
# 1. ns per I/O event of each op program (run_time_ns / run_cnt, with
#    kernel.bpf_stats_enabled) against empty programs on the same
#    tracepoints (scripts/bench/ops_floor.bpf.c), in one-thread fio loops
#    pinned to CPU 1: small buffered reads and writes on XFS and ext4,
#    direct reads on XFS, direct writes on ext4; page-cache reads with
#    --ops=all; page faults on a shared mapping of an XFS file
#    (build/bench/faultloop), for the fault sources on by default. The
#    buffered sources run only with --ops=io (or all), so those loops run
#    ilock with --ops=io.
# 2. The same under the seed workload (randrw 60/40, 16k, buffered, psync,
#    8 threads, one 256 MiB file on XFS): contended, two CPUs busy.
# 3. The seed workload for a fixed number of I/Os with no tracer, with
#    `ilock stat --ops=off`, `ilock stat` (the default, --ops=syscalls) and
#    `ilock stat --ops=io`, bpf_stats off: IOPS, and CPU time (user +
#    system) per I/O.
#
# Conditions alternate within each round, so all see the same machine
# load; every figure is the median over rounds.
set -eu
ROUNDS=${1:-5}
SECS=${2:-4}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/scripts/bench/bpf_stats.sh"
. "$REPO/scripts/bench/ready.sh"
ILOCK=$REPO/build/ilock
B=$REPO/build/bench
work=$(mktemp -d /tmp/ilock-opscost.XXXXXX)
cleanup() {
	bpf_stats_restore || true
	for m in "$work"/mnt-*; do
		[ -d "$m" ] && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
	done
	# newfs runs in a $(...) subshell, so find the devices by backing file
	for img in "$work"/*.img; do
		[ -e "$img" ] || continue
		for d in $(losetup -j "$img" | cut -d: -f1); do losetup -d "$d" 2>/dev/null || true; done
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all build/bench/bpfload build/bench/faultloop >/dev/null
clang -g -O2 -target bpf -mcpu=v3 -I"$REPO/bpf" -I"$REPO/include" \
	-I/usr/include/"$(gcc -print-multiarch)" -c "$REPO/scripts/bench/ops_floor.bpf.c" \
	-o "$B/ops_floor.bpf.o"

newfs() {  # fstype -> mountpoint
	truncate -s 1G "$work/$1.img"
	case $1 in
	xfs) mkfs.xfs -q -f "$work/$1.img" ;;
	ext4) mkfs.ext4 -q -F "$work/$1.img" ;;
	esac
	d=$(losetup --find --show "$work/$1.img")
	mkdir "$work/mnt-$1"
	mount "$d" "$work/mnt-$1"
	echo "$work/mnt-$1"
}
XFS=$(newfs xfs)
EXT4=$(newfs ext4)
SEED="fio --name=seed --filename=$XFS/ibdata1 --size=256M --rw=randrw --rwmixread=60 --bs=16k --numjobs=8 --thread --ioengine=psync"
$SEED --create_only=1 >/dev/null
for m in "$XFS" "$EXT4"; do
	fio --name=prep --filename="$m/small" --size=1M --rw=write --bs=1M --end_fsync=1 >/dev/null
done
loop() {  # mount fio-args... -> one-thread loop on CPU 1
	m=$1
	shift
	taskset -c 1 fio --name=loop --filename="$m/small" --size=1M --numjobs=1 --ioengine=psync \
		--time_based --runtime="$SECS" "$@" >/dev/null
}

fault() {  # mount -> ->fault and ->page_mkwrite on each page of its small file, on CPU 1
	taskset -c 1 "$B/faultloop" "$1/small" "$SECS"
}

prog_ids() { bpftool prog show -j | python3 -c "import json,sys; print(*[p['id'] for p in json.load(sys.stdin)])"; }

# Our tracer's programs only: other tracers (tests running beside us) load
# programs of the same names. Ours are the ones that appeared with it.
stats() {  # -> "name run_time_ns run_cnt" of our op and floor programs
	bpftool prog show -j | python3 -c "
import json
before = set(map(int, open('$work/ids').read().split()))
for p in json.load(open('/dev/stdin')):
    n = p.get('name', '')
    if p['id'] not in before and n.startswith(('op_', 'opfloor_')) and p.get('run_cnt'):
        print(n, p['run_time_ns'], p['run_cnt'])"
}

start_bg() {  # condition [mount] -> $pid of the tracer, attached
	prog_ids > "$work/ids"
	case $1 in
	floor) "$B/bpfload" "$B/ops_floor.bpf.o" $((SECS + 120)) > "$work/ready" & ;;
	dflt) "$ILOCK" stat -d $((SECS + 120)) > /dev/null 2> "$work/ready" & ;;
	io) "$ILOCK" stat --ops=io -d $((SECS + 120)) > /dev/null 2> "$work/ready" & ;;
	all) "$ILOCK" stat --ops=all -d $((SECS + 120)) > /dev/null 2> "$work/ready" & ;;
	off) "$ILOCK" stat --ops=off -d $((SECS + 120)) > /dev/null 2> "$work/ready" & ;;
	esac
	pid=$!
	wait_ready "$1" "$pid" "$work/ready"
}

stop_bg() { kill -INT "$pid"; wait "$pid" 2>/dev/null || true; }

cost() {  # label condition command... -> lines "cost label condition prog ns cnt"
	label=$1
	cond=$2
	shift 2
	start_bg "$cond"
	bpf_stats_on
	"$@" >/dev/null
	stats | sed "s/^/cost $label $cond /"
	bpf_stats_restore
	stop_bg
}

# A fixed number of I/Os (8 x NIOS): IOPS from the wall time, and the CPU
# time (user + system, BPF included) per I/O, which other tenants of a busy
# machine disturb less than the wall time.
NIOS=${NIOS:-40000}
iops() {  # condition -> "iops condition IOPS CPU_US_PER_IO"
	pid=""
	[ "$1" != none ] && start_bg "$1"
	# --io_size too: each job otherwise stops after --size bytes (16,384 I/Os)
	t=$( { /usr/bin/time -f "%U %S %e" $SEED --number_ios="$NIOS" \
		--io_size=$((NIOS * 16))k >/dev/null; } 2>&1 | tail -n 1)
	[ -n "$pid" ] && stop_bg
	echo "iops $1 $t" | awk -v n=$((8 * NIOS)) '{ printf "iops %s %.0f %.3f\n", $2, n / $5, ($3 + $4) / n * 1e6 }'
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at start, $ROUNDS rounds of ${SECS}s"
for r in $(seq "$ROUNDS"); do
	for c in floor io; do
		cost xfs-read-512 "$c" loop "$XFS" --rw=read --bs=512
		cost xfs-write-512 "$c" loop "$XFS" --rw=write --bs=512
		cost ext4-write-512 "$c" loop "$EXT4" --rw=write --bs=512
		cost xfs-dread-4k "$c" loop "$XFS" --rw=randread --bs=4k --direct=1
		cost ext4-dwrite-4k "$c" loop "$EXT4" --rw=randwrite --bs=4k --direct=1
		cost seed "$c" $SEED --time_based --runtime="$SECS"
	done
	# the defaults keep one source on every direct I/O, leaner than --ops=io's
	cost xfs-dread-4k dflt loop "$XFS" --rw=randread --bs=4k --direct=1
	cost ext4-dwrite-4k dflt loop "$EXT4" --rw=randwrite --bs=4k --direct=1
	cost ext4-read-512 floor loop "$EXT4" --rw=read --bs=512
	cost ext4-read-512 all loop "$EXT4" --rw=read --bs=512
	cost xfs-mmap-write floor fault "$XFS"
	cost xfs-mmap-write dflt fault "$XFS"
	# a different order each round: a fixed one biases who follows a teardown
	case $((r % 4)) in
	0) order="none off dflt io" ;;
	1) order="off dflt io none" ;;
	2) order="dflt io none off" ;;
	*) order="io none off dflt" ;;
	esac
	for c in $order; do iops $c; done
done > "$work/all"
echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at end"

python3 - "$work/all" <<'PY'
import sys, statistics, collections
ns = collections.defaultdict(list)   # (label, cond, source) -> [ns/event]
cnt = collections.defaultdict(list)
iops = collections.defaultdict(list)
cpu = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "iops":
        iops[f[1]].append(int(f[2]))
        cpu[f[1]].append(float(f[3]))
        continue
    _, label, cond, name, t, n = f
    source = name.split("_", 1)[1]
    ns[(label, cond, source)].append(int(t) / int(n))
    cnt[(label, cond, source)].append(int(n))

# the source each loop is about; other sources fire too (the rest of the
# machine does I/O), but are not that loop's figure
main = {"xfs-read-512": ["xfs_buffered_read"], "xfs-write-512": ["xfs_buffered_write"],
        "ext4-write-512": ["ext4_da_write_begin"], "xfs-dread-4k": ["dio_begin"],
        "ext4-dwrite-4k": ["dio_begin"], "ext4-read-512": ["filemap_get_pages"],
        "xfs-mmap-write": ["xfs_read_fault", "xfs_write_fault"],
        "seed": ["xfs_buffered_read", "xfs_buffered_write"]}
print("\nBPF ns per I/O event, median over rounds (bpf_stats run_time_ns / run_cnt)")
print(f"{'loop':16s} {'source':22s} {'ilock':9s} {'events/round':>12s} {'ilock':>7s} {'floor':>7s} {'above':>7s}")
for label, sources in main.items():
    for s in sources:
        for cond, mode in (("dflt", "defaults"), ("io", "--ops=io"), ("all", "--ops=all")):
            a, f = ns.get((label, cond, s)), ns.get((label, "floor", s))
            if not a:
                continue
            m = statistics.median(a)
            fm = statistics.median(f) if f else None
            n = statistics.median(cnt[(label, cond, s)])
            print(f"{label:16s} {s:22s} {mode:9s} {n:12.0f} {m:7.1f} "
                  f"{'-' if fm is None else f'{fm:.1f}':>7s} "
                  f"{'-' if fm is None else f'{m - fm:.1f}':>7s}")
print("\nSeed workload on XFS, fixed I/O count, median over rounds")
print(f"{'':22s} {'IOPS':>9s} {'vs none':>8s}  {'CPU us/IO':>9s} {'vs none':>8s}")
base, cbase = statistics.median(iops["none"]), statistics.median(cpu["none"])
for c, label in (("none", "no tracer"), ("off", "ilock stat --ops=off"), ("dflt", "ilock stat"),
                 ("io", "ilock stat --ops=io")):
    m, cm = statistics.median(iops[c]), statistics.median(cpu[c])
    print(f"{label:22s} {m:9.0f} {m / base * 100:7.1f}%  {cm:9.2f} {cm / cbase * 100:7.1f}%")
for c in ("none", "off", "dflt", "io"):
    print(f"  runs {c:5s} IOPS {' '.join(map(str, iops[c]))}")
    print(f"  runs {c:5s} CPU  {' '.join(f'{x:.2f}' for x in cpu[c])}")
PY
