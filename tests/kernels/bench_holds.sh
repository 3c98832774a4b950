#!/bin/busybox sh
# PID 1 of the --holds=all cost benchmark guest (scripts/test-kernels.sh
# --bench): the same workloads with no ilock, `ilock stat` (the defaults:
# no hold programs) and `ilock stat --holds=all`, interleaved per round so
# all three see the same conditions. Then one pass with the kernel's BPF run-time
# stats on, for the cost per program run. Results on the console as
# "@@ILOCK bench ..." lines and a bpftool block per mode.
#
# Workloads, each SECS seconds:
#   xfs    lockhold spin on XFS, 2 threads, 4 KiB pread/pwrite (IOLOCK each op)
#   ext4   same on ext4 (i_rwsem on writes; i_data_sem, a non-inode rwsem, too)
#   faults page faults on fresh anonymous memory (mmap_lock before 6.4;
#          per-VMA locks after), transparent huge pages off

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-4}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /sys/fs/bpf && mount -t bpf bpf /sys/fs/bpf
echo 1 > /proc/sys/kernel/printk 2>/dev/null
echo never > /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
while read -r m; do [ -n "$m" ] && insmod "/lib/modules/$m"; done < /modules.load

say() { echo "@@ILOCK $*"; }
say "kernel $(uname -r) cpus $(nproc)"

for fs in xfs ext4; do
	truncate -s 300M /tmp/$fs.img
	if [ $fs = xfs ]; then mkfs.xfs -q -f /tmp/$fs.img; else mkfs.ext4 -q -F /tmp/$fs.img; fi
	mkdir -p /mnt/$fs
	mount -o loop -t $fs /tmp/$fs.img /mnt/$fs
	dd if=/dev/zero of=/mnt/$fs/f bs=1M count=16 2>/dev/null
done
sync

start_ilock() {  # MODE
	rm -f /tmp/s.err
	if [ "$1" = holds ]; then
		ilock stat -j --holds=all > /tmp/s.json 2> /tmp/s.err &
	else
		ilock stat -j > /tmp/s.json 2> /tmp/s.err &
	fi
	ip=$!
	i=0
	while ! grep -q "ilock: tracing" /tmp/s.err 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 1500 ] || ! kill -0 $ip 2>/dev/null; then
			say "bench error ilock $1 did not start: $(cat /tmp/s.err)"
			return 1
		fi
		sleep 0.1
	done
}

num() { tr -dc '0-9'; }

workloads() {  # prints "xfs=N ext4=N faults=N"
	x=$(lockhold spin /mnt/xfs/f "$SECS" 2 | num)
	e=$(lockhold spin /mnt/ext4/f "$SECS" 2 | num)
	f=$(faults "$SECS" | num)
	echo "xfs=$x ext4=$e faults=$f"
}

r=1
while [ $r -le "$ROUNDS" ]; do
	for mode in none default holds; do
		ip=""
		if [ $mode != none ]; then
			start_ilock $mode || continue
		fi
		res=$(workloads)
		if [ -n "$ip" ]; then
			kill -INT $ip
			wait $ip
		fi
		say "bench round=$r mode=$mode secs=$SECS $res"
	done
	r=$((r + 1))
done

# BPF run time per program (kernel.bpf_stats_enabled: two clock reads per run)
echo 1 > /proc/sys/kernel/bpf_stats_enabled
for mode in default holds; do
	start_ilock $mode || continue
	res=$(workloads)
	bpftool -j prog show > /tmp/progs.json
	kill -INT $ip
	wait $ip
	say "bench stats mode=$mode secs=$SECS $res"
	echo "@@ILOCK-BEGIN progs.$mode"
	cat /tmp/progs.json
	echo
	echo "@@ILOCK-END progs.$mode"
done
echo 0 > /proc/sys/kernel/bpf_stats_enabled

say "all done"
sync
poweroff -f
