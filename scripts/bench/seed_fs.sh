# Sourced by the benchmark scripts: the seed workload's XFS filesystem, a
# 1 GiB image on a loop device with one 256 MiB file, and its fio command.
#
# bench_fs_make DIR   an empty XFS: image, loop device ($seed_dev), mount at
#                     DIR/mnt
# seed_fs_make DIR    the same, the seed file laid out; sets $FIO (append
#                     --time_based etc.)
# seed_fs_remove DIR  unmount, detach, remove DIR; safe after a partial make

seed_dev=""

bench_fs_make() {
	truncate -s 1G "$1/x.img"
	mkfs.xfs -q -f "$1/x.img"
	seed_dev=$(losetup --find --show "$1/x.img")
	mkdir "$1/mnt"
	mount "$seed_dev" "$1/mnt"
}

seed_fs_make() {
	bench_fs_make "$1"
	FIO="fio --name=seed --filename=$1/mnt/ibdata1 --size=256M --rw=randrw --rwmixread=60"
	FIO="$FIO --bs=16k --numjobs=8 --thread --ioengine=psync"
	$FIO --create_only=1 >/dev/null
}

seed_fs_remove() {
	umount "$1/mnt" 2>/dev/null || umount -l "$1/mnt" 2>/dev/null || true
	if [ -n "$seed_dev" ]; then
		losetup -d "$seed_dev" 2>/dev/null || true
	fi
	rm -rf "$1"
}
