#!/bin/sh
# What XFS hold sampling gives up: two `ilock stat` instances watch the same
# seed workload at once, one with the defaults (holds of busy inodes
# sampled) and one with --hold-sample=1 (every hold timed), and their hold
# figures for the workload's file are printed side by side.
#
# usage: scripts/bench/hold_sampling.sh [SECONDS] [ILOCK_ARGS...]   (as root)
# Each instance's programs run inside the holds the other times: the
# sub-microsecond ILOCK holds read longer in the sampled one for that.
set -eu
SECS=${1:-4}
[ $# -gt 0 ] && shift
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ILOCK=${ILOCK_BIN:-$REPO/build/ilock}
. "$REPO/scripts/bench/seed_fs.sh"
. "$REPO/scripts/bench/ready.sh"
work=$(mktemp -d /tmp/ilock-holdsample.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	seed_fs_remove "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all >/dev/null
seed_fs_make "$work"

for a in sampled exact; do
	extra=""
	[ $a = exact ] && extra="--hold-sample=1"
	# shellcheck disable=SC2086
	"$ILOCK" stat -j -D "$work/mnt" $extra "$@" > "$work/$a.json" 2> "$work/$a.err" &
	pids="$pids $!"
	wait_ready "ilock stat ($a)" "$!" "$work/$a.err"
done
$FIO --time_based --runtime="$SECS" >/dev/null
for p in $pids; do kill -INT "$p"; done
wait
pids=""

python3 - "$work" "$(stat -c %i "$work/mnt/ibdata1")" <<'PY'
import json, sys
work, ino = sys.argv[1], int(sys.argv[2])
docs = {a: json.load(open(f"{work}/{a}.json")) for a in ("sampled", "exact")}
def row(d, cls):
    return next(l for l in d["locks"] if l["ino"] == ino and l["class"] == cls)
for a, d in docs.items():
    e = d["events"]
    print(f"{a}: {d['attach']['hold_sampling']}, {e['xfs_ilock_timed']:,} of "
          f"{e['xfs_ilock']:,} xfs_ilock calls timed")
print(f"{'':34s} {'sampled':>14s} {'exact':>14s}")
for cls, name in (("i_rwsem", "IOLOCK"), ("xfs_ilock", "ILOCK")):
    for mode in ("shared", "exclusive"):
        rs, rx = row(docs["sampled"], cls), row(docs["exact"], cls)
        hs, hx = rs["hold"][mode], rx["hold"][mode]
        for what, key, unit in (("acquisitions", None, 1), ("p50 us", "p50_ns", 1e3),
                                ("p99 us", "p99_ns", 1e3), ("held in all ms", "total_ns", 1e6),
                                ("longest us", "max_ns", 1e3)):
            vs = rs["acquisitions"][mode] if key is None else hs[key] / unit
            vx = rx["acquisitions"][mode] if key is None else hx[key] / unit
            print(f"{name + ' ' + mode + ' ' + what:34s} {vs:14,.1f} {vx:14,.1f}")
PY
