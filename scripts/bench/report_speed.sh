#!/bin/sh
# Recording size and report speed, for docs/PERFORMANCE.md ("## Recording").
#
#   scripts/bench/report_speed.sh [-s SECONDS] [-r RUNS] [-i IN.ilrec] [-k DIR]
#
# 1. Records SECONDS (default 60) of the seed workload (fio randrw 60/40,
#    16 KiB, 8 threads, buffered, one 256 MiB file) on a loop-mounted XFS
#    with `ilock record -i 1`, and extrapolates its size to one hour.
#    A second recorder with --no-stacks watches the same run, side by side,
#    so the size the kernel stacks add is measured on the same waits.
#    With -i, uses an existing recording instead (no root needed then).
# 2. Stretches that recording to one hour with build/bench/recsynth (its
#    intervals replayed through the real writer) and prints the file size.
# 3. Times `ilock report` on the hour: text, --json, --csv, --html, and
#    `ilock diff` of the hour against itself; RUNS (default 5) runs each,
#    median and min printed in ms.
# -k DIR keeps the recordings (seed.ilrec, hour.ilrec) in DIR.
# Needs root for step 1 (BPF, loop devices). Cleans up its mount and loop
# device on any exit.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ILOCK=${ILOCK:-$ROOT/build/ilock}
SECS=60
RUNS=5
IN=""
KEEP=""
while getopts "s:r:i:k:" o; do
	case $o in
	s) SECS=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	i) IN=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	*) echo "usage: $0 [-s SECONDS] [-r RUNS] [-i IN.ilrec] [-k DIR]" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d /tmp/ilock-bench-rec.XXXXXX)
mnt="" loop=""
cleanup() {
	trap - EXIT INT TERM
	[ -n "$mnt" ] && { umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; }
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

[ -x "$ILOCK" ] || { echo "$ILOCK not built: run make" >&2; exit 1; }
mkdir -p "$ROOT/build/bench"
SYNTH=$ROOT/build/bench/recsynth
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/src" -o "$SYNTH" \
	"$ROOT/scripts/bench/recsynth.c" "$ROOT/src/recfile.c" "$ROOT/src/recview.c" \
	"$ROOT/src/model.c" "$ROOT/src/hist.c" "$ROOT/src/mounts.c" "$ROOT/src/cli.c" \
	"$ROOT/src/counters.c" "$ROOT/src/util.c" "$ROOT/src/ksyms.c" -lz -lm

now_ns() { date +%s%N; }

if [ -z "$IN" ]; then
	img="$work/xfs.img"
	truncate -s 1G "$img"
	mkfs.xfs -q -f "$img"
	loop=$(losetup --find --show "$img")
	mkdir -p "$work/mnt"
	mount "$loop" "$work/mnt"
	mnt="$work/mnt"
	fio --name=seed --filename="$mnt/ibdata1" --size=256M --rw=randrw --rwmixread=60 \
		--bs=16k --numjobs=8 --thread --ioengine=psync --create_only=1 >/dev/null
	fio --name=seed --filename="$mnt/ibdata1" --size=256M --rw=randrw --rwmixread=60 \
		--bs=16k --numjobs=8 --thread --ioengine=psync --time_based \
		--runtime=$((SECS + 4)) --output="$work/fio.txt" &
	fio_pid=$!
	sleep 1
	IN="$work/seed.ilrec"
	"$ILOCK" record -o "$work/nostacks.ilrec" -i 1 -d "$SECS" -D "$mnt" --no-stacks \
		2>/dev/null &
	ns_pid=$!
	# the recorder's own cost over the run, from its rusage
	/usr/bin/time -f "ilock record: %U s user + %S s sys over $SECS s, max RSS %M KiB" \
		"$ILOCK" record -o "$IN" -i 1 -d "$SECS" -D "$mnt"
	wait "$ns_pid"
	wait "$fio_pid"
	ns=$(stat -c %s "$work/nostacks.ilrec")
	echo "side by side: $(stat -c %s "$IN") bytes with stacks, $ns with --no-stacks" \
		"($(python3 -c "print('%.2f' % ($(stat -c %s "$IN")/$ns))")x)"
fi

"$ILOCK" report "$IN" -n 3 | sed -n '/^TOP INODE LOCKS/,/^$/p'
size=$(stat -c %s "$IN")
secs=$("$ILOCK" report "$IN" -j | python3 -c 'import json,sys; print(json.load(sys.stdin)["recording"]["recorded_s"])')
echo "recording: $size bytes for $secs s at -i 1"
python3 -c "s=$size; t=$secs; print('extrapolated to one hour: %.2f MB (%.0f bytes/interval)' % (s*3600/t/1e6, s/t))"

HOUR="$work/hour.ilrec"
"$SYNTH" "$IN" "$HOUR" 3600
echo "synthetic hour: $(stat -c %s "$HOUR") bytes ($(python3 -c "print('%.2f' % ($(stat -c %s "$HOUR")/1e6))") MB)"

# Wall time and CPU time (user + sys) of each run: the machine is shared,
# so wall time includes waiting for a CPU; the CPU time is the work itself.
bench() {  # label, command...
	python3 - "$RUNS" "$@" <<'PY'
import resource, statistics, subprocess, sys, time
runs, label, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall, cpu = [], []
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall.append(time.monotonic() - t0)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
print("%-28s wall median %4.0f ms (min %4.0f)   cpu median %4.0f ms (min %4.0f)   %d runs"
      % (label, statistics.median(wall) * 1e3, min(wall) * 1e3,
         statistics.median(cpu) * 1e3, min(cpu) * 1e3, runs))
PY
}

if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	cp "$IN" "$KEEP/seed.ilrec"
	cp "$HOUR" "$KEEP/hour.ilrec"
fi

echo "timing on the synthetic hour ($(nproc) CPUs, $(uname -r), load $(cut -d" " -f1-3 /proc/loadavg)):"
bench "report (text)" "$ILOCK" report "$HOUR"
bench "report --json" "$ILOCK" report "$HOUR" -j
bench "report --csv" "$ILOCK" report "$HOUR" --csv
bench "report --html" "$ILOCK" report "$HOUR" --html "$work/hour.html"
bench "report --from 10m --to 20m" "$ILOCK" report "$HOUR" --from 10m --to 20m
bench "diff hour hour" "$ILOCK" diff "$HOUR" "$HOUR"
