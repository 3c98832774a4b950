#!/bin/sh
# How long `ilock stat` takes to start: open, load (the verifier), attach,
# trace 0.1 s and stop, idle machine, builds run in turn so that both see
# the same load. Prints each build's median and range of wall time over
# ROUNDS, and, for builds that say it under -v, what the verifier checked
# in contention_begin.
#
# usage: scripts/bench/startup.sh [ROUNDS] ILOCK [ILOCK...]    (as root)
#   e.g. scripts/bench/startup.sh 9 /tmp/old/build/ilock build/ilock
set -eu
ROUNDS=${1:-9}
shift || true
[ $# -ge 1 ] || { echo "usage: $0 [ROUNDS] ILOCK [ILOCK...]" >&2; exit 2; }
work=$(mktemp -d /tmp/ilock-startup.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

i=0
while [ $i -lt "$ROUNDS" ]; do
	b=0
	for bin in "$@"; do
		b=$((b + 1))
		s=$(date +%s%N)
		"$bin" stat -v -d 0.1 -j > /dev/null 2> "$work/err.$b" ||
			{ echo "$bin failed: $(tail -n 1 "$work/err.$b")" >&2; exit 1; }
		e=$(date +%s%N)
		echo $(( (e - s) / 1000000 )) >> "$work/ms.$b"
	done
	i=$((i + 1))
done

b=0
for bin in "$@"; do
	b=$((b + 1))
	sort -n "$work/ms.$b" > "$work/sorted.$b"
	n=$(wc -l < "$work/sorted.$b")
	med=$(sed -n "$(( (n + 1) / 2 ))p" "$work/sorted.$b")
	lo=$(head -n 1 "$work/sorted.$b")
	hi=$(tail -n 1 "$work/sorted.$b")
	begin=$(sed -n 's/.*verifier:.* contention_begin_btf \([0-9][0-9,]*[0-9]\).*/\1/p' "$work/err.$b")
	printf '%s: start to stop %s ms median (%s-%s) over %s runs; contention_begin verified: %s\n' \
		"$bin" "$med" "$lo" "$hi" "$n" "${begin:-(not said by this build)} instructions"
done
