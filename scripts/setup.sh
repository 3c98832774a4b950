#!/bin/sh
# Install the Debian packages ilock needs to build, test and demo.
# Idempotent and quiet: does nothing and prints nothing when all are there.
set -eu

PKGS="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libncurses-dev libmicrohttpd-dev
pkg-config make gcc xfsprogs e2fsprogs fio util-linux tmux python3 python3-pytest jq chromium libclang-rt-14-dev
prometheus"
# Optional extras other parts use; installed when the package exists here.
EXTRA="${ILOCK_EXTRA_PKGS:-}"

missing=""
for p in $PKGS $EXTRA; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
# pytest may come from pip rather than Debian: either is fine.
case "$missing" in
*python3-pytest*)
	if python3 -c 'import pytest' 2>/dev/null; then
		missing=$(echo "$missing" | sed 's/ python3-pytest//')
	fi ;;
esac
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "ilock setup: missing packages:$missing; run as root to install them" >&2
	exit 1
fi
echo "ilock setup: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
