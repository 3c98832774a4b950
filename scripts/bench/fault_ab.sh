#!/bin/sh
# The XFS fault sources' BPF ns per event under build/bench/faultloop, for
# one or more ilock builds side by side (A/B runs of a change):
#
#   scripts/bench/fault_ab.sh ROUNDS ILOCK_BIN...   (as root)
#
# Each round runs every build once, in the order given: `ilock stat` with
# its defaults, bpf_stats on, 3 s of shared-mapping write faults on a 1 MiB
# XFS file, pinned to CPU 1. Prints "build program ns/event events".
set -eu
[ $# -ge 2 ] || { echo "usage: fault_ab.sh ROUNDS ILOCK_BIN..." >&2; exit 2; }
ROUNDS=$1
shift
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/scripts/bench/bpf_stats.sh"
. "$REPO/scripts/bench/ready.sh"
make -s -C "$REPO" build/bench/faultloop >/dev/null
work=$(mktemp -d /tmp/ilock-faultab.XXXXXX)
dev=""
pid=""
cleanup() {
	bpf_stats_restore || true
	[ -n "$pid" ] && { kill -INT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
	umount "$work/m" 2>/dev/null || true
	[ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
truncate -s 300M "$work/x.img"
mkfs.xfs -q -f "$work/x.img"
mkdir "$work/m"
dev=$(losetup --find --show "$work/x.img")
mount "$dev" "$work/m"
dd if=/dev/urandom of="$work/m/small" bs=1M count=1 2>/dev/null
sync
for r in $(seq "$ROUNDS"); do
	for bin in "$@"; do
		"$bin" stat -d 60 > /dev/null 2> "$work/err" &
		pid=$!
		wait_ready "$bin" "$pid" "$work/err"
		bpf_stats_on
		taskset -c 1 "$REPO/build/bench/faultloop" "$work/m/small" 3 > /dev/null
		for id in $(grep -h '^prog_id:' /proc/"$pid"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
			bpftool prog show id "$id" -j
			echo
		done | python3 -c "
import json, sys
for line in sys.stdin:
    if line.strip():
        p = json.loads(line)
        if 'fault' in p.get('name', '') and p.get('run_cnt'):
            print(sys.argv[1], p['name'], round(p['run_time_ns'] / p['run_cnt'], 1), p['run_cnt'])" "$bin"
		bpf_stats_restore
		kill -INT "$pid"
		wait "$pid" || true
		pid=""
	done
done
