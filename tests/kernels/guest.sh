#!/bin/busybox sh
# PID 1 of the test-kernels guest (scripts/test-kernels.sh builds the
# initramfs around it). Mounts what ilock needs, loads the modules, runs
# `ilock probe -j` and the deterministic scenarios, and prints every result
# on the console between @@ILOCK-BEGIN/@@ILOCK-END markers for the host to
# check (tests/kernels/check.py). Then powers off.
#
# Scenarios (NAME FS ENV... -- ILOCK ARGS):
#   xfs-default   readers blocked by a writer on XFS, the chosen strategy
#   xfs-sampled   same, with --wait-sample 16 (the waits are under its exact rate)
#   xfs-fentry    same, rwsem slow paths with fentry (act as before 5.19)
#   xfs-fentry-cgroup  same, with --cgroup on the root cgroup
#   xfs-kprobe    same, rwsem slow paths with kprobes, and --cgroup (the
#                 root cgroup: every wait kept, through the cgroup helper)
#   ext4-holds    a writer blocked by a writer on ext4, --holds=all
#   xfs-stall     ilock stopped while a reader still waits: the task
#                 iterator must list the wait in progress (waiting_now)
#   ext4-fsync-stall  ilock stopped while an ext4 fsync waits for a journal
#                 commit that cannot write (the ext4 image is a file on XFS
#                 whose inode lock lockhold holds): listed, with the commit
#   dir-create    a create behind getdents64 holding an XFS directory's
#                 i_rwsem shared (lockhold readdir): the namespace ops
# Each runs only if `ilock probe` says the kernel can (the host checks
# that the ones it expects did run).

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
HOLD_MS=${HOLD_MS:-4000}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /sys/fs/bpf && mount -t bpf bpf /sys/fs/bpf
# the v2 hierarchy, for --cgroup (its root holds every task)
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
echo 1 > /proc/sys/kernel/printk 2>/dev/null

say() { echo "@@ILOCK $*"; }
block() {  # NAME FILE: print a file between markers
	echo "@@ILOCK-BEGIN $1"
	cat "$2"
	echo
	echo "@@ILOCK-END $1"
}

# everything but xfs first: ilock must run, without XFS programs, before it is loaded
xfs_ko=""
while read -r m; do
	[ -n "$m" ] || continue
	case $m in */xfs.ko) xfs_ko=$m; continue ;; esac
	insmod "/lib/modules/$m" || say "insmod-failed $m"
done < /modules.load

say "kernel $(uname -r) cpus $(nproc)"
# --holds=xfs (off by default) throughout: its absence is what is checked
ilock probe -j --holds=xfs > /tmp/probe-noxfs.json 2>&1
block probe.noxfs /tmp/probe-noxfs.json
ilock stat -d 1 -j --holds=xfs > /tmp/stat-noxfs.json 2> /tmp/stat-noxfs.err
echo "rc=$?" >> /tmp/stat-noxfs.err
block stat.noxfs /tmp/stat-noxfs.json
block stat.noxfs.stderr /tmp/stat-noxfs.err
[ -n "$xfs_ko" ] && { insmod "/lib/modules/$xfs_ko" || say "insmod-failed $xfs_ko"; }

t0=$(date +%s)
ilock probe -j --holds=xfs > /tmp/probe.json 2> /tmp/probe.err
block probe /tmp/probe.json
[ -s /tmp/probe.err ] && block probe.stderr /tmp/probe.err
say "probe took $(( $(date +%s) - t0 )) s"
ilock probe --holds=all > /tmp/probe.txt 2>&1
block probe.txt /tmp/probe.txt

# can KIND: does the probe say this attach type works (ok true)?
can() {
	tr -d ' \n' < /tmp/probe.json | grep -q "\"$1\":{\"tried\":true,\"ok\":true"
}

wait_for() {  # FILE TEXT SECONDS [PID: give up when it exits]
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $(($3 * 10)) ] && return 1
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && return 1
		sleep 0.1
	done
}

mkfs_mount() {  # FS
	rm -f /tmp/fs.img
	truncate -s 300M /tmp/fs.img
	if [ "$1" = xfs ]; then
		mkfs.xfs -q -f /tmp/fs.img || return 1
	else
		mkfs.ext4 -q -F /tmp/fs.img || return 1
	fi
	mkdir -p /mnt/t
	mount -o loop -t "$1" /tmp/fs.img /mnt/t || return 1
	dd if=/dev/zero of=/mnt/t/db.dat bs=64k count=16 2>/dev/null
	sync
}

# stop_midwait WAITER_PID: ilock (st) stopped while the waiter still waits,
# after about 2 s of it; rc is ilock's exit code
stop_midwait() {
	sleep 2
	kill -INT $st
	wait $st
	rc=$?
	wait "$1"
}

# scenario_blocks NAME FILE EXTRA: the run's facts (FILE's inode and device,
# ilock's rc) and every output, between markers for check.py
scenario_blocks() {
	d=$(stat -c %d "$2")  # st_dev: MAJ:MIN as the kernel encodes it
	echo "rc=$rc ino=$(stat -c %i "$2")" \
		"dev=$(( (d >> 8) & 0xfff )):$(( (d & 0xff) | ((d >> 12) & 0xfff00) ))" \
		"hold_ms=$HOLD_MS $3" > /tmp/meta
	block "$1.meta" /tmp/meta
	block "$1.stat" /tmp/stat.json
	block "$1.stat.stderr" /tmp/stat.err
	block "$1.holder" /tmp/hold.out
	block "$1.waiter" /tmp/wait.json
}

# stat_start ENVS DIR [ilock stat args]: `ilock stat -j` on DIR in the
# background (st), with ENVS ("VAR=VAL ..." or ""), the outputs reset; 0
# once it traces, else it says why, stops ilock (rc) and returns 1
stat_start() {
	envs=$1
	shift
	rm -f /tmp/stat.json /tmp/stat.err /tmp/hold.out /tmp/wait.json /tmp/meta
	# shellcheck disable=SC2086
	env $envs ilock stat -j -D "$@" > /tmp/stat.json 2> /tmp/stat.err &
	st=$!
	if wait_for /tmp/stat.err "ilock: tracing" 150 $st; then
		say "scenario $name ilock attached after $(( $(date +%s) - t0 )) s"
		return 0
	fi
	say "scenario $name error ilock did not start"
	kill -INT $st 2>/dev/null
	wait $st
	rc=$?
	return 1
}

# hold_start ARGS: `lockhold ARGS` in the background (hp), once it holds
hold_start() {
	lockhold "$@" > /tmp/hold.out 2>&1 &
	hp=$!
	wait_for /tmp/hold.out HOLDING 60 || say "scenario $name error no HOLDING line"
}

# scenario NAME FS WAITER [ENV=VAL...] -- [ilock stat args]
# WAITER: read (3 readers), pwrite (1 writer), or stall (1 reader, and
# ilock stopped while it still waits)
scenario() {
	name=$1 fs=$2 waiter=$3
	shift 3
	envs=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs="$envs $1"; shift; done
	[ "${1:-}" = -- ] && shift
	t0=$(date +%s)
	say "scenario $name start"
	if ! mkfs_mount "$fs"; then
		say "scenario $name error mkfs/mount $fs failed"
		return
	fi
	say "scenario $name $fs mounted after $(( $(date +%s) - t0 )) s"
	if ! stat_start "$envs" /mnt/t "$@"; then
		block "$name.stat.stderr" /tmp/stat.err
		umount /mnt/t
		return
	fi
	hold_start write /mnt/t/db.dat 0 4096 "$HOLD_MS"
	if [ "$waiter" = read ]; then
		lockhold read /mnt/t/db.dat 8192 4096 3 > /tmp/wait.json 2>&1
	elif [ "$waiter" = stall ]; then
		# ilock stopped mid-wait: the reader has waited ~2 s and still does
		lockhold read /mnt/t/db.dat 8192 4096 1 > /tmp/wait.json 2>&1 &
		stop_midwait $!
	else
		lockhold pwrite /mnt/t/db.dat 65536 4096 1 > /tmp/wait.json 2>&1
	fi
	wait $hp
	say "scenario $name holder done after $(( $(date +%s) - t0 )) s"
	if [ "$waiter" != stall ]; then
		kill -INT $st
		wait $st
		rc=$?
	fi
	scenario_blocks "$name" /mnt/t/db.dat "env=$envs args=$*"
	umount /mnt/t
	say "scenario $name done in $(( $(date +%s) - t0 )) s"
}

# the default ops (from syscalls), with the XFS hold times asked for
scenario xfs-default xfs read -- --holds=xfs
# the wait sampler loads here, and a quiet lock's waits stay exact under it
scenario xfs-sampled xfs read -- --wait-sample 16
scenario xfs-stall xfs stall

# ext4 on a loop device whose file lives on XFS: holding that file's XFS
# inode lock (past the end of the ext4 fs) stalls every journal write
fsync_stall() {
	name=ext4-fsync-stall
	t0=$(date +%s)
	say "scenario $name start"
	if ! mkfs_mount xfs; then
		say "scenario $name error mkfs/mount xfs failed"
		return
	fi
	truncate -s 128M /mnt/t/ext4.img
	mkdir -p /mnt/e
	if ! mkfs.ext4 -q -F /mnt/t/ext4.img 64M || ! mount -o loop -t ext4 /mnt/t/ext4.img /mnt/e; then
		say "scenario $name error mkfs/mount ext4 failed"
		umount /mnt/t
		return
	fi
	dd if=/dev/zero of=/mnt/e/log bs=64k count=1 2>/dev/null
	sync
	if stat_start "" /mnt/e; then
		hold_start write /mnt/t/ext4.img $((100 << 20)) 4096 "$HOLD_MS"
		chmod 600 /mnt/e/log  # a metadata change: the fsync must commit it
		lockhold fsync /mnt/e/log > /tmp/wait.json 2>&1 &
		stop_midwait $!
		wait $hp
	fi
	scenario_blocks "$name" /mnt/e/log ""
	umount /mnt/e
	umount /mnt/t
	say "scenario $name done in $(( $(date +%s) - t0 )) s"
}
fsync_stall

# The shell's redirection opens with O_CREAT straight away, which waits
# exclusive behind the readdir. (busybox touch would try utimensat first:
# a lookup that takes the lock shared beside the readdir and leaves its own
# task as the readers' hint, so the holder would go unnamed.)
dir_create() {
	name=dir-create
	t0=$(date +%s)
	say "scenario $name start"
	if ! mkfs_mount xfs; then
		say "scenario $name error mkfs/mount xfs failed"
		return
	fi
	mkdir /mnt/t/dir
	touch /mnt/t/dir/a
	if stat_start "" /mnt/t; then
		hold_start readdir /mnt/t/dir "$HOLD_MS"
		: > /mnt/t/dir/new
		echo "{\"create_rc\": $?}" > /tmp/wait.json
		wait $hp
		kill -INT $st
		wait $st
		rc=$?
	fi
	scenario_blocks "$name" /mnt/t/dir ""
	umount /mnt/t
	say "scenario $name done in $(( $(date +%s) - t0 )) s"
}
dir_create
if can fentry; then
	scenario xfs-fentry xfs read ILOCK_NO_CONTENTION_TP=1 -- --holds=xfs
	scenario xfs-fentry-cgroup xfs read ILOCK_NO_CONTENTION_TP=1 -- --cgroup /sys/fs/cgroup
	scenario ext4-holds ext4 pwrite -- --holds=all
fi
if can kprobe; then
	scenario xfs-kprobe xfs read ILOCK_NO_CONTENTION_TP=1 ILOCK_NO_FENTRY=1 -- --holds=xfs \
		--cgroup /sys/fs/cgroup
fi

say "all done"
sync
poweroff -f
