#!/bin/sh
# BPF cost per event of each ilock program, and of empty programs on the
# same tracepoints (the floor), during the seed workload on XFS:
# fio randrw 60/40, 16k, buffered, psync, 8 threads, one 256 MiB file.
#
# usage: [ILOCK_ARGS="--no-stacks"] [ILOCK_BIN=...] scripts/bench/bpf_cost.sh [ROUNDS] [SECONDS]   (as root)
#        scripts/bench/bpf_cost.sh --anatomy [ROUNDS] [SECONDS]
# Prints per round and the median over rounds, ns/event = run_time_ns/run_cnt
# from kernel.bpf_stats_enabled. The floor and ilock alternate, one run each
# per round, so both see the same machine load. --anatomy instead runs the
# programs of scripts/bench/anatomy.bpf.c, each one piece of ilock's work on
# xfs_iunlock, side by side on the same events.
set -eu
MODE=compare
if [ "${1:-}" = --anatomy ]; then
	MODE=anatomy
	shift
fi
ROUNDS=${1:-5}
SECS=${2:-6}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ILOCK=${ILOCK_BIN:-$REPO/build/ilock}  # ILOCK_BIN: another build, for A/B runs
B=$REPO/build/bench
. "$REPO/scripts/bench/seed_fs.sh"
work=$(mktemp -d /tmp/ilock-bpfcost.XXXXXX)
cleanup() {
	sysctl -q kernel.bpf_stats_enabled=0 || true
	seed_fs_remove "$work"
}
trap cleanup EXIT INT TERM

make -s -C "$REPO" all build/bench/bpfload build/bench/floor.bpf.o build/bench/anatomy.bpf.o \
	>/dev/null
seed_fs_make "$work"

stats() {  # pid -> "tracepoint ns/event count" for the programs that pid holds
	ILOCK_OBJ=$REPO/build/ilock.bpf.o python3 - "$1" <<'PY'
import json, os, re, subprocess, sys
pid = sys.argv[1]
ids = set()
for fd in os.listdir(f"/proc/{pid}/fdinfo"):
    try:
        for line in open(f"/proc/{pid}/fdinfo/{fd}"):
            if line.startswith("prog_id:"):
                ids.add(int(line.split()[1]))
    except OSError:
        pass
# each ilock program's tracepoint, from its ELF section ("tp_btf/<tracepoint>")
SECTION_TP = {}
objdump = subprocess.run(["llvm-objdump", "-t", os.environ["ILOCK_OBJ"]],
                         capture_output=True, text=True).stdout
for line in objdump.splitlines():
    f = line.split()
    if len(f) >= 6 and "F" in f[2:4] and "/" in f[-3]:
        SECTION_TP[f[-1]] = f[-3].rsplit("/", 1)[-1]
for i in sorted(ids):
    p = json.loads(subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                                  capture_output=True, text=True).stdout)
    if not p.get("run_cnt"):
        continue
    # the kernel keeps 15 characters of a name; the xlated dump has it whole
    head = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", str(i)],
                          capture_output=True, text=True).stdout.split("\n", 1)[0]
    m = re.match(r"\S+ (\w+)\(", head)
    name = m.group(1) if m else p["name"]
    tp = SECTION_TP.get(name) or re.sub(r"^floor_", "", name)
    print(tp, round(p["run_time_ns"] / p["run_cnt"]), p["run_cnt"])
PY
}

one() {  # condition -> lines "condition name ns count"
	case $1 in
	# every optional floor program too, to mirror the I/O tracepoints ilock uses
	floor) "$B/bpfload" "$B/floor.bpf.o" $((SECS + 30)) contention_begin contention_end \
		xfs_ilock xfs_ilock_nowait xfs_iunlock xfs_ilock_demote \
		$(sed -n 's/^FLOOR_OPT(\(.*\))$/\1/p' "$REPO/scripts/bench/floor.bpf.c") > "$work/ready" & ;;
	anatomy) "$B/bpfload" "$B/anatomy.bpf.o" $((SECS + 30)) > "$work/ready" & ;;
	# shellcheck disable=SC2086
	ilock) "$ILOCK" stat -d $((SECS + 30)) -D "$work/mnt" ${ILOCK_ARGS:-} > /dev/null 2> "$work/ready" & ;;
	esac
	pid=$!
	while ! grep -q 'attached\|tracing' "$work/ready" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || { echo "bpf_cost: $1 did not start" >&2; exit 1; }
		sleep 0.05
	done
	sysctl -q kernel.bpf_stats_enabled=1
	$FIO --time_based --runtime="$SECS" >/dev/null
	stats "$pid" | sed "s/^/$1 /"
	sysctl -q kernel.bpf_stats_enabled=0
	kill -INT "$pid"; wait "$pid" 2>/dev/null || true
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	if [ $MODE = anatomy ]; then one anatomy; else one floor; one ilock; fi
done > "$work/all"
python3 - "$work/all" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cond, name, ns, cnt = line.split()
    rows[(cond, name)].append(int(ns))
if any(c == "anatomy" for c, _ in rows):
    empty = statistics.median(rows[("anatomy", "an_empty")])
    print(f"{'program (xfs_iunlock)':28s} {'median ns/ev':>12s} {'min-max':>12s} {'above empty':>12s}")
    for (c, n), v in sorted(rows.items(), key=lambda kv: statistics.median(kv[1])):
        m = statistics.median(v)
        print(f"{n:28s} {m:12.0f} {min(v):5d}-{max(v):<6d} {m - empty:12.0f}")
    sys.exit(0)
floor = {n: statistics.median(v) for (c, n), v in rows.items() if c == "floor"}
print(f"{'program (tracepoint)':28s} {'median ns/ev':>12s} {'min-max':>12s} {'floor':>6s} {'above floor':>12s}")
for (c, n), v in sorted(rows.items()):
    if c != "ilock":
        continue
    f = floor.get(n)
    m = statistics.median(v)
    print(f"{n:28s} {m:12.0f} {min(v):5d}-{max(v):<6d} {f if f is not None else '-':>6} "
          f"{(m - f) if f is not None else float('nan'):12.0f}")
PY
