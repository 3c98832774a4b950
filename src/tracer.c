// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fallback.h"
#include "ilock.h"
#include "ilock.skel.h"
#include "log.h"
#include "mapmem.h"
#include "mounts.h"
#include "tracer.h"
#include "tracer_ops.h"
#include "util.h"

struct prog_pair {
	const char *probe;
	struct bpf_program *btf, *raw;
};

void tracer_note_attach(struct tracer *t, const char *probe, const char *mode)
{
	/* a later decision on the same probe (an attach that failed) replaces it */
	for (int i = 0; i < t->nattach; i++)
		if (!strcmp(t->attach[i].probe, probe)) {
			t->attach[i].mode = mode;
			return;
		}
	if (t->nattach < RENDER_MAX_ATTACH) {
		t->attach[t->nattach].probe = probe;
		t->attach[t->nattach].mode = mode;
		t->nattach++;
	}
}

static void set_mode(struct tracer *t, struct prog_pair *p, enum attach_mode m)
{
	bpf_program__set_autoload(p->btf, m == ATTACH_TP_BTF);
	bpf_program__set_autoload(p->raw, m == ATTACH_RAW_TP);
	tracer_note_attach(t, p->probe, attach_mode_name(m));
}

/*
 * A sampler's token bucket (sample_weight): refilled with the exact rate in
 * whole events a jiffy (so the rate moves in steps of HZ per second) and
 * holding one second of it, so a burst after a quiet second is taken whole.
 */
static void sampler_budget(uint32_t rate, unsigned hz, uint32_t *per_jiffy, uint32_t *burst)
{
	uint64_t pj = ((uint64_t)rate + hz / 2) / hz;

	if (rate && !pj)
		pj = 1;
	*per_jiffy = (uint32_t)pj;
	*burst = (uint32_t)(pj * hz);
}

/* The XFS hold sampler (xfs_hold.bpf.c): per CPU and inode; beyond it, 1 in N. */
static void configure_hold_sampling(struct tracer *t, const struct ilock_opts *o)
{
	struct ilock_bpf *s = t->skel;
	uint32_t one_in, rate, per_jiffy, burst;

	cli_hold_sampling(o, &one_in, &rate);
	/* t->probe.hz is never 0: probe_hz assumes 250 when it cannot tell */
	sampler_budget(rate, t->probe.hz, &per_jiffy, &burst);
	s->rodata->cfg_xfs_holds = t->strat.xfs_holds != ATTACH_OFF;
	s->rodata->cfg_hold_one_in = one_in;
	s->rodata->cfg_hold_tokens_per_jiffy = per_jiffy;
	s->rodata->cfg_hold_burst = burst;
	if (t->strat.xfs_holds == ATTACH_OFF)
		snprintf(t->hold_sampling, sizeof(t->hold_sampling), "off");
	else
		cli_hold_sampling_name(o, t->hold_sampling, sizeof(t->hold_sampling));
	tracer_note_attach(t, "hold_sampling", t->hold_sampling);
}

/* The wait sampler (lockwait.bpf.c): per CPU and lock address; off unless asked for. */
static void configure_wait_sampling(struct tracer *t, const struct ilock_opts *o)
{
	struct ilock_bpf *s = t->skel;
	uint32_t one_in, rate, per_jiffy, burst;

	cli_wait_sampling(o, &one_in, &rate);
	sampler_budget(rate, t->probe.hz, &per_jiffy, &burst);
	s->rodata->cfg_wait_one_in = one_in;
	s->rodata->cfg_wait_tokens_per_jiffy = per_jiffy;
	s->rodata->cfg_wait_burst = burst;
	cli_wait_sampling_name(o, t->wait_sampling, sizeof(t->wait_sampling));
	tracer_note_attach(t, "wait_sampling", t->wait_sampling);
}

static void configure(struct tracer *t, const struct ilock_opts *o)
{
	struct ilock_bpf *s = t->skel;
	const struct filters *f = &o->f;
	uint32_t n = o->max_locks ? o->max_locks : 0;

	s->rodata->cfg_tgid = f->tgid;
	s->rodata->cfg_comm_on = f->comm_on;
	s->rodata->cfg_cgroup_on = f->cgroup != NULL;
	{
		struct stat cs;

		/* a cgroup v2 directory's inode is its id (for the task iterator's kfuncs) */
		if (t->cgroup_fd >= 0 && !fstat(t->cgroup_fd, &cs))
			s->rodata->cfg_cgroup_id = cs.st_ino;
	}
	memcpy((char *)s->rodata->cfg_comm, f->comm, sizeof(f->comm));
	s->rodata->cfg_dev = f->kdev;
	s->rodata->cfg_ino = f->ino;
	s->rodata->cfg_fs_magic = f->fs_magic;
	s->rodata->cfg_class_mask = f->class_mask;
	if (n) {
		bpf_map__set_max_entries(s->maps.wait_index, n);
		bpf_map__set_max_entries(s->maps.wait_slots, n);
		bpf_map__set_max_entries(s->maps.edge_index, n);
		bpf_map__set_max_entries(s->maps.edge_slots, n);
		bpf_map__set_max_entries(s->maps.inodes, n);
	}
	s->rodata->cfg_wait_slots = bpf_map__max_entries(s->maps.wait_slots);
	s->rodata->cfg_edge_slots = bpf_map__max_entries(s->maps.edge_slots);
	/*
	 * Holds are counted for every XFS inode touched, contended or not, in
	 * up to 6 entries each (3 classes x 2 modes): give them 4x the room.
	 */
	bpf_map__set_max_entries(s->maps.lock_holds, 4 * bpf_map__max_entries(s->maps.wait_slots));
	configure_hold_sampling(t, o);
	configure_wait_sampling(t, o);
}

/*
 * Before load: the maps as configured, full, must fit in half of the
 * memory available now. The slots are allocated at load and the hashes
 * grow as inodes are seen; a large --max-inodes must not push the very
 * workload we watch into reclaim or the OOM killer.
 */
static int check_map_memory(struct tracer *t, const struct ilock_opts *o)
{
	struct map_mem m = { 0 };
	struct bpf_map *map;
	char text[16384], a[32], b[32], c[32];
	uint64_t avail;
	ssize_t n;
	int fd;

	bpf_object__for_each_map(map, t->skel->obj) {
		struct map_shape s = {
			.type = bpf_map__type(map), .key_size = bpf_map__key_size(map),
			.value_size = bpf_map__value_size(map),
			.max_entries = bpf_map__max_entries(map), .flags = bpf_map__map_flags(map),
		};

		if (bpf_map__autocreate(map))
			map_mem_add(&m, &s, t->ncpus);
	}
	if (o->verbose)
		log_info("maps: %s of kernel memory at load, up to %s when full",
			 fmt_bytes(a, sizeof(a), m.at_load), fmt_bytes(b, sizeof(b), m.at_most));
	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;  /* cannot tell: the kernel still refuses what it cannot allocate */
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = 0;
	if (!meminfo_available(text, &avail) || map_mem_fits(&m, avail))
		return 0;
	log_error("the maps would take up to %s of kernel memory (%s at load), more than half "
		  "of the %s available: lower --max-inodes (now %u)",
		  fmt_bytes(a, sizeof(a), m.at_most), fmt_bytes(b, sizeof(b), m.at_load),
		  fmt_bytes(c, sizeof(c), avail), bpf_map__max_entries(t->skel->maps.wait_slots));
	return -ENOMEM;
}

static size_t slots_len(const struct slot_region *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return ((size_t)r->max * r->stride + page - 1) / page * page;
}

/* Map a slot array read-only: its readers then need no syscall. */
static int map_slots(struct bpf_map *map, size_t key_size, struct slot_region *r)
{
	void *p;

	r->stride = bpf_map__value_size(map);  /* a multiple of 8, as the kernel's elem_size */
	r->key_size = key_size;
	r->max = bpf_map__max_entries(map);
	p = mmap(NULL, slots_len(r), PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		log_error("cannot map %s: %s", bpf_map__name(map), strerror(-err));
		return err;
	}
	r->base = p;
	return 0;
}

static void unmap_slots(struct slot_region *r)
{
	if (r->base)
		munmap((void *)r->base, slots_len(r));
	r->base = NULL;
}

/*
 * The programs that see a lock wait begin, and those that see it end. The
 * ends go first, then the begins, then the rest. contention_end tells a
 * wait that began before we attached (the thread has no task storage yet:
 * every program that makes storage comes after the begins) from one begin
 * let go, without classifying the lock. And with the ends already there,
 * every wait begun under us is seen to end: a wait caught between the two
 * attaches is one that began before tracing (end_without_begin), not a
 * loss (begin_without_end, which the next wait of its thread would count).
 * ext4 fsyncs likewise: an fsync begun and ended between the two attaches
 * would be listed in progress until its thread's next fsync. Holds the
 * same, after the waits: unlocks before locks, or a lock taken between
 * the two attaches and let go before the second would be counted a lost
 * unlock (lock_without_unlock) on every start on a busy XFS host.
 */
static int wait_side(const struct tracer *t, const struct bpf_program *prog)
{
	const struct ilock_bpf *s = t->skel;

	if (prog == s->progs.contention_end_btf || prog == s->progs.contention_end_raw ||
	    prog == s->progs.slow_read_end_fexit || prog == s->progs.slow_write_end_fexit ||
	    prog == s->progs.slow_read_end_kretprobe || prog == s->progs.slow_write_end_kretprobe ||
	    prog == s->progs.jbd2_fsync_exit)
		return 0;
	if (prog == s->progs.contention_begin_btf || prog == s->progs.contention_begin_raw ||
	    prog == s->progs.slow_read_begin_fentry || prog == s->progs.slow_write_begin_fentry ||
	    prog == s->progs.slow_read_begin_kprobe || prog == s->progs.slow_write_begin_kprobe ||
	    prog == s->progs.jbd2_fsync_enter)
		return 1;
	if (prog == s->progs.xfs_iunlock_btf || prog == s->progs.xfs_iunlock_raw ||
	    prog == s->progs.xfs_ilock_demote_btf || prog == s->progs.xfs_ilock_demote_raw ||
	    prog == s->progs.hold_up_read || prog == s->progs.hold_up_write ||
	    prog == s->progs.hold_downgrade_write)
		return 2;
	return 3;
}

static int attach_one(struct tracer *t, struct bpf_program *prog)
{
	struct bpf_link *link = fallback_attach(t, prog);
	int err = -errno;

	if (!link) {
		log_error("cannot attach %s: %s", bpf_program__name(prog), strerror(-err));
		return err;
	}
	/* the skeleton destroys links it owns; keep ours on the object */
	for (int i = 0; i < t->skel->skeleton->prog_cnt; i++)
		if (*t->skel->skeleton->progs[i].prog == prog)
			*t->skel->skeleton->progs[i].link = link;
	return 0;
}

/*
 * The iterator that lists waits in progress is an extra: tracing goes on
 * without it, and the views say the list is unavailable.
 */
static void attach_waiting(struct tracer *t)
{
	struct bpf_link *link;

	if (!bpf_program__autoload(t->skel->progs.waiting_now))
		return;
	link = bpf_program__attach_iter(t->skel->progs.waiting_now, NULL);
	if (!link) {
		log_warn("waits in progress will not be listed: cannot attach the task iterator: %s",
			 strerror(errno));
		tracer_note_attach(t, "waiting_now", "off");
		return;
	}
	t->skel->links.waiting_now = link;
}

static int attach_all(struct tracer *t)
{
	struct bpf_program *prog;
	int err;

	/* pass 0: the wait ends; 1: their begins; 2: the hold ends; 3: everything else */
	for (int pass = 0; pass < 4; pass++) {
		bpf_object__for_each_program(prog, t->skel->obj) {
			if (!bpf_program__autoload(prog) || wait_side(t, prog) != pass ||
			    prog == t->skel->progs.waiting_now)
				continue;
			err = attach_one(t, prog);
			if (err)
				return err;
		}
	}
	attach_waiting(t);
	return 0;
}

/*
 * Waits in progress: one pass of the task iterator, which writes a record
 * for each thread with a timed wait not yet ended. A fresh iterator per
 * read (an iterator fd is read once).
 */
int tracer_read_waiting(struct tracer *t, uint64_t in_flight, struct waiting_set *ws)
{
	char buf[32 * sizeof(struct ilock_waiting)];
	struct bpf_link *link = t->skel->links.waiting_now;
	size_t have = 0, whole;
	ssize_t n;
	int fd, err = 0;

	waiting_reset(ws);
	if (!link)
		return 0;
	ws->sees_older = t->sees_older;
	/*
	 * The walk costs per thread on the host (docs/PERFORMANCE.md); with
	 * no wait or fsync begun and not ended it can find nothing. ILOCK_WALK_ALWAYS
	 * walks anyway, for scripts/bench/walk_cost.py.
	 */
	if (!in_flight && !t->walk_always && !t->walk_for_older) {
		ws->available = true;
		return 0;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	/* records are whole in each read in practice; a split one is carried over */
	while ((n = read(fd, buf + have, sizeof(buf) - have)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		have += (size_t)n;
		whole = have - have % sizeof(struct ilock_waiting);
		if ((err = waiting_add_raw(ws, buf, whole, t->start_mono_ns)))
			break;
		memmove(buf, buf + whole, have - whole);
		have -= whole;
	}
	close(fd);
	ws->torn_bytes += have;
	if (err)
		return err;
	ws->available = true;
	t->walk_for_older = t->walk_for_older && ws->before_trace;
	waiting_finish(ws);
	return 0;
}

/*
 * -p names a process (its tgid): one that does not exist, or a thread of
 * another, would match no wait at all, and say so only by silence.
 */
static int check_pid(uint32_t pid)
{
	char path[64], line[256];
	unsigned long tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f) {
		log_error("-p %u: no such process", pid);
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %lu", &tgid) == 1)
			break;
	fclose(f);
	if (tgid && tgid != pid) {
		log_error("-p %u: a thread of process %lu; -p takes a process id (tgid)", pid, tgid);
		return -EINVAL;
	}
	return 0;
}

/* start() when the task iterator is what failed to load: try again without it */
#define START_WITHOUT_WALK 1

/*
 * -v: what the verifier checked, per program, largest first. It refuses a
 * program past 1,000,000 instructions, and the time it takes is most of
 * a start: the margin to watch when the programs grow.
 */
static void log_verified(struct tracer *t, uint64_t load_ns)
{
	struct { const char *name; uint32_t insns; } v[64], tmp;
	char line[2048], n[32];
	struct bpf_program *prog;
	size_t nv = 0, at;

	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || nv == sizeof(v) / sizeof(v[0]) || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		v[nv].name = bpf_program__name(prog);
		v[nv++].insns = info.verified_insns;
	}
	for (size_t i = 1; i < nv; i++)
		for (size_t j = i; j > 0 && v[j].insns > v[j - 1].insns; j--) {
			tmp = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	at = (size_t)snprintf(line, sizeof(line), "%zu programs loaded in %.0f ms; instructions "
			      "verified (1,000,000 allowed each):", nv, load_ns / 1e6);
	for (size_t i = 0; i < nv && at < sizeof(line); i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%s %s %s", i ? "," : "",
				       v[i].name, fmt_count(n, sizeof(n), v[i].insns));
	log_info("verifier: %s", line);
}

/*
 * --cgroup's directory, opened once before the load: its inode is the id
 * the task iterator compares, and the same fd goes into the map the
 * programs ask, so both name one cgroup even if the path is replaced.
 */
static int open_cgroup(struct tracer *t, const char *path)
{
	if (!path)
		return 0;
	t->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->cgroup_fd < 0) {
		int err = -errno;

		log_error("--cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * --cgroup, into the map the programs ask (before they are attached: with
 * the map empty they would drop everything). The map keeps its own
 * reference to the cgroup, so the directory's fd is closed at once.
 */
static int set_cgroup(struct tracer *t, const char *path)
{
	uint32_t k = 0;
	int err;

	if (t->cgroup_fd < 0)
		return 0;
	err = bpf_map_update_elem(bpf_map__fd(t->skel->maps.cgroup_filter), &k, &t->cgroup_fd,
				  BPF_ANY);
	if (err) {
		err = -errno;
		log_error("--cgroup %s: cannot select it: %s", path, strerror(-err));
	}
	close(t->cgroup_fd);
	t->cgroup_fd = -1;
	return err;
}

static int start(struct tracer *t, const struct ilock_opts *o, bool walk, bool idle)
{
	struct prog_pair begin, end, lock, nowait, unlock, demote;
	struct strategy_req req = { .holds = o->holds };
	enum attach_mode tp_mode;
	char fstype[32] = "";
	uint64_t load_ns;
	int err;

	memset(t, 0, sizeof(*t));
	t->stats_fd = -1;
	t->cgroup_fd = -1;
	log_setup_libbpf(o->verbose);
	probe_kernel(&t->probe);
	/* -D's filesystem, read once: for what the filters leave, and the warning below */
	if (o->f.kdev)
		mounts_fstype(o->f.kdev, fstype, sizeof(fstype));
	t->fs_drop = filter_scope(o->f.fs_magic, o->f.kdev, fstype, t->scope_why,
				  sizeof(t->scope_why));
	req.fs_drop = t->fs_drop;
	req.class_mask = o->f.class_mask;
	req.scope_why = t->scope_why;
	choose_strategy(&t->probe, &req, &t->strat);
	if (o->verbose)
		probe_print(stderr, &t->probe, &t->strat);
	{
		char why[256];

		/* a run that can record nothing would say only "no waits" at its end */
		if (filters_match_nothing(t->fs_drop, o->f.class_mask, t->scope_why, why,
					  sizeof(why))) {
			log_error("the filters leave nothing to trace: %s", why);
			return -EINVAL;
		}
	}

	if (!t->probe.has_caps) {
		log_error("needs root, or the CAP_BPF and CAP_PERFMON capabilities");
		return -EPERM;
	}
	if (o->f.tgid && (err = check_pid(o->f.tgid)))
		return err;
	if (o->f.kdev && !fstype[0]) {
		char d[24];

		log_warn("-D %s: no filesystem is mounted from it now; waits will show once one is",
			 fmt_kdev(d, sizeof(d), o->f.kdev));
	}
	if (t->strat.lock_waits == ATTACH_OFF) {
		const char *why = t->strat.lock_waits_why;

		log_error("cannot trace lock waits on this kernel (%s): %s (run `ilock probe` for "
			  "details)", t->probe.kernel, strncmp(why, "off: ", 5) ? why : why + 5);
		return -ENOTSUP;
	}
	/* asked for, and off: said without -v, or the hold tables stay empty unexplained */
	if (o->holds != ILOCK_HOLDS_OFF && t->strat.xfs_holds == ATTACH_OFF) {
		log_warn("--holds=%s: XFS hold times are %s", o->holds == ILOCK_HOLDS_ALL ? "all" : "xfs",
			 t->strat.xfs_holds_why);
	}
	if (o->holds == ILOCK_HOLDS_ALL && t->strat.rwsem_holds == ATTACH_OFF) {
		log_error("--holds=all: %s (run `ilock probe --holds=all` for details)",
			  t->strat.rwsem_holds_why);
		return -ENOTSUP;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		log_error("cannot count CPUs: %s", strerror(-t->ncpus));
		return t->ncpus ? t->ncpus : -EINVAL;
	}

	t->skel = ilock_bpf__open();
	if (!t->skel) {
		err = -errno;
		log_error("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	begin = (struct prog_pair){ "contention_begin", t->skel->progs.contention_begin_btf,
				    t->skel->progs.contention_begin_raw };
	end = (struct prog_pair){ "contention_end", t->skel->progs.contention_end_btf,
				  t->skel->progs.contention_end_raw };
	lock = (struct prog_pair){ "xfs_ilock", t->skel->progs.xfs_ilock_btf,
				   t->skel->progs.xfs_ilock_raw };
	nowait = (struct prog_pair){ "xfs_ilock_nowait", t->skel->progs.xfs_ilock_nowait_btf,
				     t->skel->progs.xfs_ilock_nowait_raw };
	unlock = (struct prog_pair){ "xfs_iunlock", t->skel->progs.xfs_iunlock_btf,
				     t->skel->progs.xfs_iunlock_raw };
	demote = (struct prog_pair){ "xfs_ilock_demote", t->skel->progs.xfs_ilock_demote_btf,
				     t->skel->progs.xfs_ilock_demote_raw };
	/* with fentry or kprobes the rwsem slow paths stand in for the tracepoints */
	tp_mode = t->strat.lock_waits == ATTACH_TP_BTF || t->strat.lock_waits == ATTACH_RAW_TP ?
		  t->strat.lock_waits : ATTACH_OFF;
	set_mode(t, &begin, tp_mode);
	set_mode(t, &end, tp_mode);
	set_mode(t, &lock, t->strat.xfs_holds);
	set_mode(t, &nowait, t->strat.xfs_holds);
	set_mode(t, &unlock, t->strat.xfs_holds);
	set_mode(t, &demote, t->strat.xfs_holds);
	fallback_configure(t);
	/* the task iterator needs the kernel's BTF (bpf_iter_task) */
	walk = walk && t->probe.vmlinux_btf;
	bpf_program__set_autoload(t->skel->progs.waiting_now, walk);
	tracer_note_attach(t, "waiting_now", walk ? "iter" : "off");
	err = open_cgroup(t, o->f.cgroup);
	if (err)
		goto fail;
	configure(t, o);
	tracer_ops_configure(t, o);
	err = check_map_memory(t, o);
	if (err)
		goto fail;

	load_ns = now_monotonic_ns();
	err = ilock_bpf__load(t->skel);
	load_ns = now_monotonic_ns() - load_ns;
	if (err && walk) {
		/* an extra must not stop the tracing: the caller retries without it */
		tracer_stop(t);
		return START_WITHOUT_WALK;
	}
	if (err) {
		log_error("cannot load the BPF programs: %s (run with -v for the verifier log)",
			  strerror(-err));
		goto fail;
	}
	if (o->verbose)
		log_verified(t, load_ns);
	if ((err = map_slots(t->skel->maps.wait_slots, sizeof(struct ilock_key), &t->waits)) ||
	    (err = map_slots(t->skel->maps.edge_slots, sizeof(struct ilock_edge_key), &t->edges)) ||
	    (err = set_cgroup(t, o->f.cgroup)))
		goto fail;
	/* every program returns at once until tracer_set_idle(t, false) */
	if (idle)
		tracer_set_idle(t, true);
	err = attach_all(t);
	if (err)
		goto fail;
	t->start_mono_ns = now_monotonic_ns();
	t->walk_always = probe_env_on("ILOCK_WALK_ALWAYS");
	/*
	 * Under --wait-sample and --cgroup the walk leaves such waits out
	 * (waiting.bpf.c); the verdict must not rely on it then, nor on a
	 * kernel whose blocker notes no rw_semaphore.
	 */
	t->walk_for_older = t->probe.task_blocker && !o->wait_sample &&
			    (!o->f.cgroup || t->probe.cgroup_kfuncs);
	t->sees_older = t->walk_for_older && t->probe.blocker_rwsem;
	return 0;

fail:
	tracer_stop(t);
	return err;
}

static int start_walk_or_not(struct tracer *t, const struct ilock_opts *o, bool idle)
{
	int err = start(t, o, !probe_env_on("ILOCK_NO_WALK"), idle);

	if (err == START_WITHOUT_WALK) {
		/* said only if the rest loads: otherwise its own error is the story */
		err = start(t, o, false, idle);
		if (!err)
			log_warn("waits in progress will not be listed: the task iterator did not load "
				 "(-v shows why)");
	}
	return err;
}

int tracer_start(struct tracer *t, const struct ilock_opts *o)
{
	return start_walk_or_not(t, o, false);
}

int tracer_start_idle(struct tracer *t, const struct ilock_opts *o)
{
	return start_walk_or_not(t, o, true);
}

/* a pointer into *from's own memory, moved to the same place in *to */
static const char *rebase(const char *p, const struct tracer *from, struct tracer *to)
{
	const char *lo = (const char *)from, *hi = lo + sizeof(*from);

	return p >= lo && p < hi ? (const char *)to + (p - lo) : p;
}

void tracer_move(struct tracer *dst, struct tracer *src)
{
	*dst = *src;
	/* some attach notes name strings the tracer holds (hold_sampling, ...) */
	for (int i = 0; i < dst->nattach; i++) {
		dst->attach[i].probe = rebase(dst->attach[i].probe, src, dst);
		dst->attach[i].mode = rebase(dst->attach[i].mode, src, dst);
	}
	memset(src, 0, sizeof(*src));
	src->stats_fd = src->cgroup_fd = -1;
}

void tracer_set_idle(struct tracer *t, bool idle)
{
	/* a plain store to the mapped .bss: the programs' next runs see it */
	__atomic_store_n(&t->skel->data_bench->bench_idle, idle ? 1 : 0, __ATOMIC_SEQ_CST);
}

int tracer_start_fresh(struct tracer *t, const struct ilock_opts *o, char *msg, size_t len)
{
	struct ilock_opts quiet = *o;
	int err;

	quiet.verbose = 0;
	log_capture(msg, len);
	err = tracer_start_idle(t, &quiet);
	log_capture(NULL, 0);
	log_setup_libbpf(o->verbose);
	return err;
}

void tracer_hand_over(struct tracer *from, struct tracer *to)
{
	tracer_set_idle(from, true);
	tracer_set_idle(to, false);
}

static int grow_bufs(struct tracer *t, size_t need)
{
	void *k, *v;

	if (need <= t->buf_cap)
		return 0;
	k = realloc(t->keys, need);
	if (!k)
		return -ENOMEM;
	t->keys = k;
	v = realloc(t->vals, need);
	if (!v)
		return -ENOMEM;
	t->vals = v;
	t->buf_cap = need;
	return 0;
}

int tracer_scan_map(struct tracer *t, struct bpf_map *map, tracer_entry_fn fn, void *ctx)
{
	int fd = bpf_map__fd(map);
	size_t ksz = bpf_map__key_size(map), vsz = bpf_map__value_size(map);
	uint32_t max = bpf_map__max_entries(map), chunk = max < 4096 ? max : 4096;
	__u64 batch = 0;
	bool first = true;
	int err;

	err = grow_bufs(t, (size_t)chunk * (vsz > ksz ? vsz : ksz));
	if (err)
		return err;
	for (;;) {
		__u32 count = chunk;

		err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, t->keys, t->vals, &count,
					   NULL);
		if (err && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				goto slow;
			return -errno;
		}
		for (__u32 i = 0; i < count; i++) {
			int e = fn(ctx, (char *)t->keys + i * ksz, (char *)t->vals + i * vsz);

			if (e < 0)
				return e;
		}
		if (err)  /* ENOENT: that was the last chunk */
			return 0;
		first = false;
	}

slow: {
	char key[512], next[512];
	bool have = false;

	if (ksz > sizeof(key) || vsz > t->buf_cap)
		return -E2BIG;
	while (!bpf_map_get_next_key(fd, have ? key : NULL, next)) {
		memcpy(key, next, ksz);
		have = true;
		if (bpf_map_lookup_elem(fd, key, t->vals))
			continue;  /* deleted meanwhile */
		err = fn(ctx, key, t->vals);
		if (err < 0)
			return err;
	}
	return 0;
}
}

int tracer_scan_waits(struct tracer *t, tracer_entry_fn fn, void *ctx)
{
	return slots_scan(&t->waits, __atomic_load_n(&t->skel->bss->wait_slots_used, __ATOMIC_ACQUIRE),
			  fn, ctx);
}

int tracer_scan_edges(struct tracer *t, tracer_entry_fn fn, void *ctx)
{
	return slots_scan(&t->edges, __atomic_load_n(&t->skel->bss->edge_slots_used, __ATOMIC_ACQUIRE),
			  fn, ctx);
}

static void table_use_of(struct table_use *u, const struct slot_region *r, const uint32_t *used)
{
	uint32_t n = __atomic_load_n(used, __ATOMIC_RELAXED);

	/* the claim counter runs past max by the claims that found it full */
	u->cap = r->max;
	u->used = n < r->max ? n : r->max;
}

void tracer_tables(struct tracer *t, struct table_use *out)
{
	table_use_of(&out[TABLE_LOCKS], &t->waits, &t->skel->bss->wait_slots_used);
	table_use_of(&out[TABLE_PAIRS], &t->edges, &t->skel->bss->edge_slots_used);
}

static int wait_entry(void *ctx, const void *key, const void *val)
{
	return snap_add_wait(ctx, key, val);
}

/* A pair, and the waiter stack its slot keeps (struct ilock_edge_wstack). */
static int edge_entry(void *ctx, const void *key, const void *val)
{
	int err = snap_add_edge(ctx, key, val);

	return err ? err : snap_add_edge_wstack(ctx, key, val);
}

static int hold_entry(void *ctx, const void *key, const void *val)
{
	return snap_add_hold(ctx, key, val);
}

static int inode_entry(void *ctx, const void *k, const void *v)
{
	return snap_add_inode_info(ctx, k, v);
}

static int read_counters(struct tracer *t, struct snapshot *s)
{
	int fd = bpf_map__fd(t->skel->maps.counters);
	uint64_t *vals = calloc((size_t)t->ncpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (uint32_t c = 0; c < ILOCK_COUNTER_MAX; c++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &c, vals)) {
			free(vals);
			return -errno;
		}
		for (int i = 0; i < t->ncpus; i++)
			sum += vals[i];
		s->counters[c] = sum;
	}
	free(vals);
	return 0;
}

int tracer_read(struct tracer *t, struct snapshot *s)
{
	struct ilock_bpf *k = t->skel;
	int err, werr;

	snap_reset(s);
	s->mono_ns = now_monotonic_ns();
	if ((err = read_counters(t, s)) == 0) {
		/* begun, minus ended, minus those a later begin replaced */
		uint64_t done = s->counters[ILOCK_EV_WAIT] + s->counters[ILOCK_LOST_BEGIN_NO_END];

		s->in_flight = s->counters[ILOCK_EV_WAIT_BEGUN] > done ?
			       s->counters[ILOCK_EV_WAIT_BEGUN] - done : 0;
	}
	/*
	 * An extra: if the walk fails, this read has no stalls, and says so.
	 * Before the inodes: a wait begun before tracing notes its inode
	 * (path) as the walk finds it.
	 */
	if (!err && (werr = tracer_read_waiting(t, s->in_flight + waiting_fsyncs_open(s->counters),
						&s->waiting))) {
		if (!t->walk_warned)
			log_warn("cannot list the waits in progress: %s", strerror(-werr));
		t->walk_warned = true;
		waiting_reset(&s->waiting);
	}
	/*
	 * In the order the BPF side writes them, backwards: a wait's end adds
	 * its pair after its wait, and its inode was noted at its begin. So a
	 * pair read here has its wait read too, and every wait its inode and
	 * path (an exporter series takes its path label once, when made).
	 */
	tracer_tables(t, s->tables);
	if (err ||
	    (err = tracer_scan_edges(t, edge_entry, s)) ||
	    (err = tracer_scan_waits(t, wait_entry, s)) ||
	    (err = tracer_scan_map(t, k->maps.lock_holds, hold_entry, s)) ||
	    (err = tracer_scan_map(t, k->maps.inodes, inode_entry, s)) ||
	    (err = tracer_ops_read(t, s)))
		log_error("cannot read the BPF maps: %s", strerror(-err));
	return err;
}

int tracer_enable_stats(struct tracer *t)
{
	if (t->stats_fd >= 0)
		return 0;
	t->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (t->stats_fd < 0) {
		int err = -errno;

		log_warn("cannot enable BPF run-time stats: %s", strerror(-err));
		return err;
	}
	return 0;
}

int tracer_prog_stats(struct tracer *t, uint64_t *run_ns, uint64_t *run_cnt)
{
	struct bpf_program *prog;

	*run_ns = *run_cnt = 0;
	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		*run_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
	}
	return 0;
}

void tracer_detach_probes(struct tracer *t)
{
	if (!t->skel)
		return;
	for (int i = 0; i < t->skel->skeleton->prog_cnt; i++) {
		struct bpf_link **l = t->skel->skeleton->progs[i].link;

		/* the iterator traces nothing: the waits in progress stay readable */
		if (!l || !*l || *l == t->skel->links.waiting_now)
			continue;
		bpf_link__destroy(*l);
		*l = NULL;
	}
}

void tracer_stop(struct tracer *t)
{
	if (t->stats_fd >= 0)
		close(t->stats_fd);
	t->stats_fd = -1;
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
	t->cgroup_fd = -1;
	unmap_slots(&t->waits);
	unmap_slots(&t->edges);
	ilock_bpf__destroy(t->skel);  /* detaches every link and frees maps */
	t->skel = NULL;
	free(t->keys);
	free(t->vals);
	t->keys = t->vals = NULL;
	t->buf_cap = 0;
}
