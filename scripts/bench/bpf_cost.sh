#!/bin/sh
# BPF cost per event of each ilock program, and of empty programs on the
# same tracepoints (the floor), during the seed workload on XFS:
# fio randrw 60/40, 16k, buffered, psync, 8 threads, one 256 MiB file.
#
# usage: [ILOCK_ARGS="--no-stacks"] [ILOCK_BIN=...] scripts/bench/bpf_cost.sh [ROUNDS] [SECONDS]   (as root)
#        scripts/bench/bpf_cost.sh --anatomy [ROUNDS] [SECONDS]
#        [ILOCK_BIN=...] scripts/bench/bpf_cost.sh --ab OTHER_BIN [ROUNDS] [SECONDS]
# Prints per round and the median over rounds, ns/event = run_time_ns/run_cnt
# from kernel.bpf_stats_enabled. The floor and ilock alternate, one run each
# per round, so both see the same machine load. Two lines follow: both
# per inode-lock wait, from ilock's own counts (its -j output): most
# contention events are other locks', which the programs drop at once, so a
# wait costs several events of each program; and both per I/O fio did, each
# with its own events and I/Os, all programs on ilock's tracepoints counted
# (the per-wait line charges the floor at ilock's rate of events per wait,
# and the rate of contention per I/O moves between windows), then the
# contention events per I/O each saw. --anatomy instead runs the
# programs of scripts/bench/anatomy.bpf.c, each one piece of ilock's work on
# xfs_iunlock, side by side on the same events, attached in the object's
# order in odd rounds and reversed in even ones: the first program to touch
# a cache line pays for the miss, so a piece is judged on both orders.
# --ab attaches two ilock builds at once (A: ILOCK_BIN or build/ilock, B:
# OTHER_BIN), so both see the very same events under the same load, A first
# in odd rounds and B first in even ones; it prints each program's A - B
# per order and their mean. Load moves one build's figures by 30-40% between
# runs; side by side, it moves both.
set -eu
MODE=compare
if [ "${1:-}" = --anatomy ]; then
	MODE=anatomy
	shift
elif [ "${1:-}" = --ab ]; then
	MODE=ab
	OTHER=${2:?usage: bpf_cost.sh --ab OTHER_BIN [ROUNDS] [SECONDS]}
	[ -x "$OTHER" ] || { echo "bpf_cost: $OTHER is not an executable" >&2; exit 2; }
	shift 2
fi
ROUNDS=${1:-5}
SECS=${2:-6}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/scripts/bench/bpf_stats.sh"
. "$REPO/scripts/bench/ready.sh"
ILOCK=${ILOCK_BIN:-$REPO/build/ilock}  # ILOCK_BIN: another build, for A/B runs
B=$REPO/build/bench
. "$REPO/scripts/bench/seed_fs.sh"
work=$(mktemp -d /tmp/ilock-bpfcost.XXXXXX)
cleanup() {
	bpf_stats_restore || true
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

ilock_bg() {  # binary ready-file [json-file]: ilock stat in the background, its stderr to ready-file
	# with a json-file, its report as JSON goes there
	# shellcheck disable=SC2086
	"$1" stat -d $((SECS + 30)) -D "$work/mnt" ${3:+-j} ${ILOCK_ARGS:-} > "${3:-/dev/null}" 2> "$2" &
}

# ilock's own counts of one run: "mix events BEGINS WAITS" (contention events
# of any lock, and the inode-lock waits among them)
mix() {
	python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["events"]
print("mix events", e["contention_begin"], e["inode_lock_waits"])' "$1" 2>/dev/null || true
}

measure() {  # label pid [label pid...]: fio under bpf_stats, its I/Os, then each pid's programs
	bpf_stats_on
	$FIO --time_based --runtime="$SECS" --output-format=json --output="$work/fio.json" >/dev/null
	# "io LABEL IOS 0": the I/Os fio did in the window, for the cost per I/O
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"]
print("io", sys.argv[2], sum(x["read"]["total_ios"] + x["write"]["total_ios"] for x in j), 0)' \
		"$work/fio.json" "$1"
	while [ $# -ge 2 ]; do
		stats "$2" | sed "s/^/$1 /"
		shift 2
	done
	bpf_stats_restore
}

one() {  # condition -> lines "condition name ns count"
	case $1 in
	# every optional floor program too, to mirror the I/O tracepoints ilock uses
	floor) "$B/bpfload" "$B/floor.bpf.o" $((SECS + 30)) contention_begin contention_end \
		xfs_ilock xfs_ilock_nowait xfs_iunlock xfs_ilock_demote \
		$(sed -n 's/^FLOOR_OPT(\(.*\))$/\1/p' "$REPO/scripts/bench/floor.bpf.c") > "$work/ready" & ;;
	anatomy) "$B/bpfload" "$B/anatomy.bpf.o" $((SECS + 30)) > "$work/ready" & ;;
	anatomy_rev) BPFLOAD_REVERSE=1 "$B/bpfload" "$B/anatomy.bpf.o" $((SECS + 30)) \
		> "$work/ready" & ;;
	ilock) ilock_bg "$ILOCK" "$work/ready" "$work/ilock.json" ;;
	esac
	pid=$!
	wait_ready "$1" "$pid" "$work/ready"
	measure "$1" "$pid"
	kill -INT "$pid"; wait "$pid" 2>/dev/null || true
	[ "$1" != ilock ] || mix "$work/ilock.json"
}

ab_round() {  # round -> lines "A@pos name ns count" and "B@pos ..."
	if [ $(($1 % 2)) = 1 ]; then
		first=A; second=B; bin1=$ILOCK; bin2=$OTHER
	else
		first=B; second=A; bin1=$OTHER; bin2=$ILOCK
	fi
	ilock_bg "$bin1" "$work/ready1"
	pid1=$!
	wait_ready "$bin1" "$pid1" "$work/ready1"
	ilock_bg "$bin2" "$work/ready2"
	pid2=$!
	wait_ready "$bin2" "$pid2" "$work/ready2"
	measure "$first@1" "$pid1" "$second@2" "$pid2"
	kill -INT "$pid1" "$pid2"
	wait "$pid1" 2>/dev/null || true
	wait "$pid2" 2>/dev/null || true
	rm -f "$work/ready1" "$work/ready2"
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	if [ $MODE = compare ]; then
		one floor; one ilock
	elif [ $MODE = ab ]; then
		ab_round "$r"
	elif [ $((r % 2)) = 1 ]; then
		one anatomy
	else
		one anatomy_rev
	fi
done > "$work/all"
python3 - "$work/all" "$SECS" <<'PY'
import sys, statistics, collections
secs = float(sys.argv[2])
rows = collections.defaultdict(list)
# per measured window: {"ios": the workload's I/Os, "prog": {tracepoint: BPF ns in all}}
windows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cond, name, ns, cnt = line.split()
    if cond == "io":
        windows[name].append({"ios": int(ns), "prog": {}, "cnt": {}})
        continue
    rows[(cond, name)].append(int(ns))
    if windows[cond]:
        windows[cond][-1]["prog"][name] = int(ns) * int(cnt)
        windows[cond][-1]["cnt"][name] = int(cnt)
if any("@" in c for c, _ in rows):
    # per round A - B; rounds alternate who runs first
    lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("io ")]
    per = collections.defaultdict(lambda: collections.defaultdict(dict))
    rnd = collections.Counter()
    cur = {}
    for cond, name, ns, cnt in lines:
        b, pos = cond.split("@")
        key = (b, pos, name)
        rnd[key] += 1
        per[name][rnd[key]][(b, pos)] = int(ns)
    print(f"{'program (tracepoint)':28s} {'A first':>17s} {'B first':>17s} {'A - B':>6s} {'per pair':>12s}")
    print(f"{'':28s} {'A':>5s} {'B':>5s} {'A-B':>5s} {'A':>5s} {'B':>5s} {'A-B':>5s} {'mean':>6s} {'min-max':>12s}")
    med = statistics.median
    for name in sorted(per):
        # rounds in order: odd ones A first, even ones B first
        rs = [per[name][i] for i in sorted(per[name])]
        af = [(d[("A", "1")], d[("B", "2")]) for d in rs if ("A", "1") in d and ("B", "2") in d]
        bf = [(d[("A", "2")], d[("B", "1")]) for d in rs if ("A", "2") in d and ("B", "1") in d]
        if not af or not bf:
            continue
        da, db = med([a - b for a, b in af]), med([a - b for a, b in bf])
        # a pair of rounds (one of each order) gives one order-free difference
        pairs = [((a1 - b1) + (a2 - b2)) / 2 for (a1, b1), (a2, b2) in zip(af, bf)]
        print(f"{name:28s} {med([a for a, _ in af]):5.0f} {med([b for _, b in af]):5.0f} {da:5.0f} "
              f"{med([a for a, _ in bf]):5.0f} {med([b for _, b in bf]):5.0f} {db:5.0f} "
              f"{(da + db) / 2:6.0f} {min(pairs):5.0f} to {max(pairs):<5.0f}")
    sys.exit(0)
if any(c.startswith("anatomy") for c, _ in rows):
    # each order against its own empties (one runs first, the other last)
    def med(c, n):
        v = rows.get((c, n))
        return statistics.median(v) if v else None
    def empty(c):
        e = [m for m in (med(c, "an_empty"), med(c, "an_empty_last")) if m is not None]
        return sum(e) / len(e) if e else None
    names = sorted({n for _, n in rows})
    conds = [c for c in ("anatomy", "anatomy_rev") if any(k[0] == c for k in rows)]
    above = {}
    for n in names:
        a = [med(c, n) - empty(c) for c in conds if med(c, n) is not None and empty(c) is not None]
        above[n] = sum(a) / len(a)
    print(f"{'program (xfs_iunlock)':28s} {'in order':>9s} {'reversed':>9s} {'above empty (mean)':>19s}")
    for n in sorted(names, key=lambda n: above[n]):
        cols = [med(c, n) for c in ("anatomy", "anatomy_rev")]
        cells = "".join(f"{x:9.0f}" if x is not None else f"{'-':>9s}" for x in cols)
        print(f"{n:28s}{cells} {above[n]:19.0f}")
    sys.exit(0)
floor = {n: statistics.median(v) for (c, n), v in rows.items() if c == "floor"}
# ilock's own counts, per round: contention events of any lock, and its waits
mixes = [(int(b), int(w)) for b, w in
         (l.split()[2:] for l in open(sys.argv[1]) if l.startswith("mix "))]
print(f"{'program (tracepoint)':28s} {'median ns/ev':>12s} {'min-max':>12s} {'floor':>6s} {'above floor':>12s}")
for (c, n), v in sorted(rows.items()):
    if c != "ilock":
        continue
    f = floor.get(n)
    m = statistics.median(v)
    print(f"{n:28s} {m:12.0f} {min(v):5d}-{max(v):<6d} {f if f is not None else '-':>6} "
          f"{(m - f) if f is not None else float('nan'):12.0f}")
# Most contention events are other locks' (spinlocks above all), which the
# programs drop at once: per inode-lock wait, both programs run this often.
ends = ("contention_begin", "contention_end")
med = {n: statistics.median(v) for (c, n), v in rows.items() if c == "ilock"}
if mixes and all(w for _, w in mixes) and all(n in med and n in floor for n in ends):
    per = statistics.median([b / w for b, w in mixes])
    il, fl = sum(med[n] for n in ends) * per, sum(floor[n] for n in ends) * per
    print(f"per inode-lock wait ({per:.1f} contention events each): "
          f"ilock {il:.0f} ns, floor {fl:.0f} ns, {il / fl:.2f}x")
# Per I/O of the workload, each condition with its own events: the
# per-wait line above charges the floor at ilock's rate of events per wait,
# and how much contention an I/O meets moves between windows. The floor
# counts only the tracepoints ilock had programs on.
ws = {c: [w for w in windows.get(c, []) if w["ios"] and w["prog"]] for c in ("ilock", "floor")}
if ws["ilock"] and ws["floor"]:
    tps = set().union(*(w["prog"] for w in ws["ilock"]))
    def per_io(c):
        return statistics.median(sum(v for t, v in w["prog"].items() if t in tps) / w["ios"]
                                 for w in ws[c])
    il, fl = per_io("ilock"), per_io("floor")
    iops = {c: statistics.median(w["ios"] for w in ws[c]) / secs for c in ws}
    print(f"per I/O of the workload: ilock {il:.1f} ns, floor {fl:.1f} ns, {il / fl:.2f}x "
          f"(I/Os per second: ilock {iops['ilock']:.0f}, floor {iops['floor']:.0f})")
    ev = {c: statistics.median(w["cnt"].get("contention_begin", 0) / w["ios"] for w in ws[c])
          for c in ws}
    print(f"contention events per I/O: ilock {ev['ilock']:.2f}, floor {ev['floor']:.2f}")
PY
