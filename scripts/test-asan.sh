#!/bin/sh
# make test-asan: the integration tests against an ilock built with
# AddressSanitizer and UBSan, so that the parts the unit tests cannot reach
# (the tracer, the commands, ilocktop's screen, the exporter's server) run
# under the sanitizers on real tracepoints and filesystems. The unit tests
# and the fuzzer cover the pure parts already; CI does not run this (about
# 5 minutes more).
#
# It builds in a temporary worktree of the working tree's tracked files
# (`git stash create`: uncommitted changes included, untracked files not),
# so build/ keeps its ordinary objects. The helpers and benchmark tools are
# built without sanitizers: they are the workload, not the tool. A leak at
# exit fails the command that leaked (LeakSanitizer's exit status).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d /tmp/ilock-asan.XXXXXX)
cleanup() {
	git -C "$ROOT" worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"
	git -C "$ROOT" worktree prune
}
trap cleanup EXIT
trap 'exit 130' INT TERM

REV=$(git -C "$ROOT" stash create)
git -C "$ROOT" worktree add --detach --quiet "$TREE" "${REV:-HEAD}"
cd "$TREE"
make --no-print-directory -s helpers bench-tools
# the unit tests' sanitizers (the Makefile's SAN_FLAGS, passed by make test-asan)
CFLAGS="-O1 -g ${SAN_FLAGS:?run it as make test-asan}" make --no-print-directory -s all
echo "test-asan: $("$TREE/build/ilock" --version), built with ASan and UBSan"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	${PYTHON:-python3} -m pytest -q -p no:cacheprovider tests/integration "$@"
