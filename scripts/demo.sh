#!/bin/sh
# The built-in demo: the field report in shared/seeds/000_* on this machine.
# 8 fio threads do 60/40 random read/write of 16 KiB on one 256 MiB file,
# buffered, first on XFS, then on ext4, each on its own loop-mounted image,
# with `ilock stat` watching. XFS readers wait behind writers on the IOLOCK;
# ext4 readers take no inode lock, so only writers wait there.
# Then shared/seeds/004: an ext4 fsync stuck behind its journal commit,
# shown while it lasts.
set -eu

ILOCK=${ILOCK:-$(dirname "$0")/../build/ilock}
LOCKHOLD=${LOCKHOLD:-$(dirname "$0")/../build/helpers/lockhold}
SECS=${ILOCK_DEMO_SECONDS:-6}
work=$(mktemp -d /tmp/ilock-demo.XXXXXX)
mounts=""  # "MOUNTPOINT:LOOPDEV", newest first: a stacked one goes before its host
pids=""    # background jobs still running

cleanup() {
	trap - EXIT INT TERM
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	for ml in $mounts; do
		umount "${ml%%:*}" 2>/dev/null || umount -l "${ml%%:*}" 2>/dev/null || true
		losetup -d "${ml#*:}" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

mkfs_mount() {  # fstype -> mount point
	img="$work/$1.img"
	truncate -s 1G "$img"
	case "$1" in
	xfs) mkfs.xfs -q -f "$img" ;;
	ext4) mkfs.ext4 -q -F "$img" ;;
	esac
	dev=$(losetup --find --show "$img")
	mkdir -p "$work/$1"
	mounts="$work/$1:$dev $mounts"
	mount "$dev" "$work/$1"
}

run() {  # fstype
	mnt="$work/$1"
	echo
	echo "=== $1: fio randrw 60/40, 16k, buffered, 8 threads, one 256 MiB file ($SECS s) ==="
	fio --name=seed --filename="$mnt/ibdata1" --size=256M --rw=randrw --rwmixread=60 \
		--bs=16k --numjobs=8 --thread --ioengine=psync --create_only=1 >/dev/null
	fio --name=seed --filename="$mnt/ibdata1" --size=256M --rw=randrw --rwmixread=60 \
		--bs=16k --numjobs=8 --thread --ioengine=psync --time_based --runtime=$((SECS + 2)) \
		--group_reporting --output="$work/fio-$1.txt" &
	fio_pid=$!
	pids="$fio_pid"
	sleep 1
	# hold times are off by default (their cost: docs/PERFORMANCE.md); the
	# demo asks for XFS's, to show how long the writers held the IOLOCK
	holds=""
	[ "$1" = xfs ] && holds="--holds=xfs"
	echo "\$ ilock stat -d $SECS -D $mnt -n 3 $holds"
	# shellcheck disable=SC2086
	"$ILOCK" stat -d "$SECS" -D "$mnt" -n 3 $holds
	wait "$fio_pid"
	pids=""
	grep -E '^\s*(read|write):' "$work/fio-$1.txt" | sed 's/^ */  fio /'
}

wait_file() {  # FILE TEXT PID: until FILE has TEXT; fails if PID ends or after 30 s
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] && kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
}

# seed 004: the ext4 image is a file on the XFS above, on a loop device of
# its own; holding that file's XFS inode lock (a write past the end of the
# ext4 fs, kept waiting by lockhold) stalls every write of its journal
fsync_stall() {
	img="$work/xfs/journal.img"
	echo
	echo "=== ext4: an fsync behind a journal commit stuck on a slow device (4 s) ==="
	truncate -s 128M "$img"
	mkfs.ext4 -q -F "$img" 64M
	jdev=$(losetup --find --show "$img")
	mkdir -p "$work/journal"
	mounts="$work/journal:$jdev $mounts"
	mount "$jdev" "$work/journal"
	dd if=/dev/zero of="$work/journal/ib_logfile0" bs=64k count=16 2>/dev/null
	sync
	echo "\$ ilock stat -d 3 -D $work/journal -n 3"
	"$ILOCK" stat -d 3 -D "$work/journal" -n 3 2> "$work/stat.err" &
	st=$!
	pids="$st"
	wait_file "$work/stat.err" "ilock: tracing" $st || { cat "$work/stat.err" >&2; return 1; }
	"$LOCKHOLD" write "$img" $((100 << 20)) 4096 4000 > "$work/hold.out" 2>&1 &
	hp=$!
	pids="$st $hp"
	wait_file "$work/hold.out" HOLDING $hp || { cat "$work/hold.out" >&2; return 1; }
	chmod 600 "$work/journal/ib_logfile0"  # a metadata change: the fsync must commit it
	"$LOCKHOLD" fsync "$work/journal/ib_logfile0" > "$work/fsync.out" &
	fp=$!
	pids="$st $hp $fp"
	wait $st
	wait $fp $hp
	pids=""
	sed 's/.*"fsync_ns": \([0-9]*\).*/\1/' "$work/fsync.out" |
		awk '{ printf "  the fsync returned after %.1f s, when the commit could write\n", $1 / 1e9 }'
}

mkfs_mount xfs
mkfs_mount ext4
run xfs
run ext4
fsync_stall
echo
echo "Read it: IN SHORT gives how many tasks stood waiting for an inode lock on"
echo "average. On XFS it is several, on the file's IOLOCK (i_rwsem), with shared"
echo "waits: readers blocked behind writers and writers behind readers (WHO"
echo "SERIALISES WHOM, BY COMMAND). On ext4 there are fewer, exclusive waits only,"
echo "writer behind writer, and more read IOPS. Nearly all of it was between"
echo "disjoint byte ranges: a range lock would have let them run together."
echo "The fsync was listed while it lasted (STALLED, WAITING NOW), with the journal"
echo "commit it waited for and the jbd2 thread asleep in D: look at the device, not"
echo "at the locks."
