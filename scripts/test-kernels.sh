#!/bin/sh
# make test-kernels: boot Debian's 6.1 and 6.12 cloud kernels under qemu
# (software emulation: never -enable-kvm, nested KVM hangs on our hosts)
# and run `ilock probe` and the deterministic XFS scenario inside each;
# tests/kernels/check.py asserts on the JSON they print. The host kernel is
# covered by the integration tests; its `ilock probe` joins the summary.
#
#   scripts/test-kernels.sh [SERIES...]          SERIES: 6.1 6.12 (default: both)
#   scripts/test-kernels.sh --bench [SERIES...]  --holds=all cost in the guests
#                                                (docs/PERFORMANCE.md); ~6 min each
#
# Downloads (apt-get download) and unpacked kernels are cached under
# .cache/kernels/ (gitignored; ILOCK_KERNEL_CACHE overrides). Installs
# qemu-system-x86, cpio, busybox-static and xz-utils when missing.
# QEMU_TIMEOUT (default 600 s) bounds each guest run: a hang, not a slow host.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ILOCK_KERNEL_CACHE:-$ROOT/.cache/kernels}
BENCH=0
if [ "${1:-}" = --bench ]; then
	BENCH=1
	shift
fi
QEMU_TIMEOUT=${QEMU_TIMEOUT:-600}
SERIES=${*:-6.1 6.12}
WORK=$(mktemp -d /tmp/ilock-kernels.XXXXXX)
pids=""
# A process and its descendants, by pid: `timeout` puts qemu in a process
# group of its own, which a Ctrl-C on this script never reaches.
killtree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do killtree "$c"; done
	kill "$1" 2>/dev/null || true
}
cleanup() {
	local p
	for p in $pids; do killtree "$p"; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "test-kernels: $*" >&2; }
die() { log "$*"; exit 1; }

need_pkgs() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root, or install them)"
	log "installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2 ||
		{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends $missing >&2; } ||
		die "cannot install$missing"
}

# The newest package of a series, e.g. linux-image-6.1.0-56-cloud-amd64.
# The 6.12 ones come from bookworm-security / bookworm-backports.
pick_package() {
	local re
	case $1 in
	6.1) re='^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' ;;
	6.12) re='^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64$' ;;
	*) die "unknown kernel series $1 (6.1 or 6.12)" ;;
	esac
	apt-cache search --names-only "$re" 2>/dev/null | cut -d' ' -f1 | sort -V | tail -n 1
}

# Download (once) and unpack (once); prints the unpacked directory.
fetch_kernel() {
	local pkg dir deb
	pkg=$(pick_package "$1")
	if [ -z "$pkg" ]; then
		# offline, or the index lacks it: use what the cache has
		dir=$(ls -d "$CACHE"/x/linux-image-"$1"[.-]*cloud-amd64 2>/dev/null | sort -V | tail -n 1)
		[ -n "$dir" ] || die "no $1 cloud kernel in apt (try apt-get update) nor in $CACHE"
		echo "$dir"
		return
	fi
	mkdir -p "$CACHE/x"
	dir=$CACHE/x/$pkg
	if [ ! -e "$dir/.unpacked" ]; then
		deb=$(ls "$CACHE/${pkg}_"*.deb 2>/dev/null | tail -n 1)
		if [ -z "$deb" ]; then
			log "downloading $pkg"
			# a stale index may name a version the mirror no longer has
			(cd "$CACHE" && apt-get download -q "$pkg" >&2) ||
				{ apt-get update -q >&2 && (cd "$CACHE" && apt-get download -q "$pkg" >&2); } ||
				die "apt-get download $pkg failed"
			deb=$(ls "$CACHE/${pkg}_"*.deb | tail -n 1)
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg -x "$deb" "$dir"
		touch "$dir/.unpacked"
	fi
	echo "$dir"
}

# Copy a binary and the shared libraries ldd names into the initramfs.
copy_with_libs() {  # DEST BINARY [NAME_IN_DEST]
	local dest=$1 bin=$2 name=${3:-/bin/$(basename "$2")} lib
	mkdir -p "$dest$(dirname "$name")"
	cp -L "$bin" "$dest$name"
	ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' |
	while read -r lib; do
		[ -e "$dest$lib" ] && continue
		mkdir -p "$dest$(dirname "$lib")"
		cp -L "$lib" "$dest$lib"
	done
}

# Modules and their dependencies, in load order, decompressed.
copy_modules() {  # DEST KDIR VERSION MODULE...
	local dest=$1 kdir=$2 ver=$3 mdir line deps m f out
	shift 3
	mdir=$kdir/lib/modules/$ver
	[ -s "$mdir/modules.dep" ] || busybox depmod -b "$kdir" "$ver"
	: > "$dest/modules.load"
	for m in "$@"; do
		line=$(grep -E "^([^:]*/)?$m\.ko(\.xz|\.zst|\.gz)?:" "$mdir/modules.dep") ||
			die "module $m not in $mdir/modules.dep"
		# deps are listed nearest first: load them in reverse
		deps=$(echo "$line" | cut -d: -f2 | tr ' ' '\n' | sed '/^$/d' | tac)
		for f in $deps $(echo "$line" | cut -d: -f1); do
			out=${f%.xz}
			out=${out%.zst}
			out=${out%.gz}
			grep -qx "$out" "$dest/modules.load" && continue
			mkdir -p "$dest/lib/modules/$(dirname "$out")"
			case $f in
			*.xz) xz -dc "$mdir/$f" > "$dest/lib/modules/$out" ;;
			*.zst) zstd -qdc "$mdir/$f" > "$dest/lib/modules/$out" ;;
			*.gz) gzip -dc "$mdir/$f" > "$dest/lib/modules/$out" ;;
			*) cp "$mdir/$f" "$dest/lib/modules/$out" ;;
			esac
			echo "$out" >> "$dest/modules.load"
		done
	done
}

build_initrd() {  # KDIR VERSION OUT
	local kdir=$1 ver=$2 out=$3 r
	r=$WORK/root-$ver
	rm -rf "$r"
	mkdir -p "$r/bin" "$r/sbin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/mnt" "$r/etc"
	cp /bin/busybox "$r/bin/busybox"
	copy_with_libs "$r" "$ROOT/build/ilock"
	copy_with_libs "$r" "$ROOT/build/helpers/lockhold"
	copy_with_libs "$r" "$(command -v mkfs.xfs)"
	copy_with_libs "$r" "$(command -v mke2fs)" /bin/mkfs.ext4
	[ -e /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$r/etc/"
	copy_modules "$r" "$kdir" "$ver" loop xfs
	if [ $BENCH = 1 ]; then
		cc -O2 -Wall -Wextra -Werror -o "$WORK/faults" "$ROOT/tests/kernels/faults.c"
		copy_with_libs "$r" "$WORK/faults"
		copy_with_libs "$r" "$(command -v bpftool)"
		cp "$ROOT/tests/kernels/bench_holds.sh" "$r/init"
	else
		cp "${GUEST_INIT:-$ROOT/tests/kernels/guest.sh}" "$r/init"
	fi
	chmod 755 "$r/init"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
}

boot() {  # KDIR VERSION LOG
	local kdir=$1 ver=$2 logf=$3 initrd
	initrd=$WORK/initrd-$ver.cpio.gz
	build_initrd "$kdir" "$ver" "$initrd"
	run_guest "$kdir" "$ver" "$logf" "$initrd"
	# A guest kernel that dies before our init says a word (TCG sometimes
	# oopses patching static keys at boot) never ran ilock: boot it again,
	# once. A crash caused by ilock comes later and is not retried.
	if ! grep -q '^@@ILOCK' "$logf"; then
		log "$ver: the guest died before its init ran (console: $(grep -m1 -o \
			'Kernel panic[^|]*' "$logf" || echo 'no panic line')); booting it again, once"
		cp "$logf" "$logf.first"
		run_guest "$kdir" "$ver" "$logf" "$initrd"
	fi
}

run_guest() {  # KDIR VERSION LOG INITRD
	local kdir=$1 ver=$2 logf=$3 initrd=$4 start
	log "booting $ver under qemu (tcg, up to $QEMU_TIMEOUT s)"
	start=$(date +%s)
	# -accel tcg only: nested KVM hangs on this project's hosts.
	# thread=single runs the vCPUs in turn on one host thread: with one
	# thread per vCPU (qemu 7.2's default), a vCPU can run a stale
	# translation of code another vCPU patched, and the kernel's int3
	# text patching (every fentry attach and detach) then oopses with
	# "int3" in up_read or down_read_trylock, panicking the guest. Seen
	# in CI and within a few --holds=all attaches under load, never with
	# thread=single.
	# The benchmark counts instructions, not host time: with -icount the
	# guest clock advances 1 ns per guest instruction, so a busy, shared
	# host cannot skew ops per (guest) second. icount boots one vCPU only
	# (qemu 7.2 hangs bringing up a second one).
	# shellcheck disable=SC2046
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel "${QEMU_ACCEL:-tcg,thread=single}" -m 1G -nographic \
		$([ $BENCH = 1 ] && echo "-smp 1 -icount ${QEMU_ICOUNT:-shift=0,sleep=off}" ||
			echo "-smp 2") \
		-no-reboot -kernel "$kdir/boot/vmlinuz-$ver" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet loglevel=1${BENCH_ROUNDS:+ ROUNDS=$BENCH_ROUNDS}" \
		</dev/null > "$logf" 2>&1 ||
		log "qemu for $ver exited $? (timeout or crash: see the checks)"
	log "$ver: guest ran $(( $(date +%s) - start )) s"
}

need_pkgs qemu-system-x86 cpio busybox-static xz-utils
[ -x "$ROOT/build/ilock" ] && [ -x "$ROOT/build/helpers/lockhold" ] ||
	make -C "$ROOT" --no-print-directory all helpers >&2
command -v mkfs.xfs >/dev/null && command -v mke2fs >/dev/null ||
	die "mkfs.xfs and mke2fs are needed (xfsprogs, e2fsprogs)"

mkdir -p "$CACHE/logs"
logs=""
guests=""
for s in $SERIES; do
	kdir=$(fetch_kernel "$s")
	ver=$(ls "$kdir/lib/modules" | head -n 1)
	[ -n "$ver" ] && [ -e "$kdir/boot/vmlinuz-$ver" ] || die "bad unpacked kernel in $kdir"
	logf=$CACHE/logs/$ver.log
	[ $BENCH = 0 ] || logf=$CACHE/logs/$ver.bench.log
	guests="$guests $kdir|$ver|$logf"
	logs="$logs $s=$logf"
done
# Each guest runs on one host thread (thread=single): on a 2-CPU host two
# kernels boot side by side in half the time. The benchmark counts guest
# instructions (-icount), not host time, so it may run side by side too.
# PARALLEL_GUESTS=0 boots them one after the other.
for g in $guests; do
	kdir=${g%%|*}
	rest=${g#*|}
	ver=${rest%%|*}
	logf=${rest#*|}
	if [ "${PARALLEL_GUESTS:-1}" = 1 ]; then
		boot "$kdir" "$ver" "$logf" &
		pids="$pids $!"
	else
		boot "$kdir" "$ver" "$logf"
	fi
done
for p in $pids; do
	wait "$p" || die "booting a guest failed"
done
pids=""

if [ $BENCH = 1 ]; then
	rc=0
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/kernels/bench_report.py" $logs || rc=$?
	exit $rc
fi

# The host kernel: the same scenario, default and forced fallback, from
# the integration tests (they need root, BTF and loop devices like the rest).
"$ROOT/build/ilock" probe -j --holds=xfs > "$WORK/host-probe.json" 2>/dev/null ||
	log "ilock probe on the host failed"
log "running the scenario on the host kernel ($(uname -r))"
host=FAIL
python3 -m pytest -q -p no:cacheprovider \
	"$ROOT/tests/integration/test_stat.py::test_xfs_readers_blocked_by_writer" \
	"$ROOT/tests/integration/test_fallback.py" >&2 && host=ok
rc=0
# shellcheck disable=SC2086
python3 "$ROOT/tests/kernels/check.py" --host-probe "$WORK/host-probe.json" \
	--host-result "$host" $logs || rc=$?
exit $rc
