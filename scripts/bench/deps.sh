#!/bin/sh
# Install what only the benchmarks need (not `make test`): bpftrace for the
# bpftrace condition, perf for the `perf lock` condition, bpftool for map
# memory. Idempotent and quiet: prints nothing when all are there.
set -eu

PKGS="bpftrace linux-perf bpftool fio xfsprogs e2fsprogs util-linux"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "ilock bench: missing packages:$missing; run as root to install them" >&2
	exit 1
fi
echo "ilock bench: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
