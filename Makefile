# ilock build. `make` builds BPF objects, the skeleton, `ilock` and the
# `ilocktop` link. `make test` and `make demo` set up the machine first.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# bash-completion loads a command's completion from here by its name
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PYTHON ?= python3

OUT := build
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# Display strings are truncated on purpose; snprintf bounds every write.
CFLAGS += $(WARN) -Wno-format-truncation -std=gnu11 -MMD -MP -Iinclude -Isrc -I$(OUT) -D_GNU_SOURCE
LDLIBS := -lbpf -lelf -lz -lncursesw -lmicrohttpd -lm -lpthread

# BPF_PROG's generated wrappers always take ctx, used or not.
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) \
	-Wno-unused-parameter -MMD -MP -Iinclude -Ibpf \
	$(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))

# maps.bpf.c defines what the others declare extern; bpftool 7.1's linker
# mis-places .maps entries when an extern comes before its definition.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))

# Every src/*.c except main.c goes into a library the tests link too.
LIB_SRCS := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJS := $(patsubst src/%.c,$(OUT)/src/%.o,$(LIB_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
# Pure modules the unit tests build again under ASan/UBSan.
PURE_SRCS := src/hist.c src/model.c src/mounts.c src/render_text.c src/render_json.c \
	src/json.c src/cli.c src/counters.c src/util.c
PURE_SRCS += src/ops.c src/ksyms.c src/render_ops.c src/render_json_ops.c
PURE_SRCS += src/strategy.c src/probe_report.c
PURE_SRCS += src/recfile.c src/recview.c src/report_out.c src/report_html.c src/sigtest.c src/diff.c
PURE_SRCS += src/top_model.c src/top_format.c src/top_store.c src/slots.c src/mapmem.c
PURE_SRCS += src/prom.c src/prom_series.c src/waiting.c src/render_waiting.c src/titles.c src/pathcheck.c src/idmap.c
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all

HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(OUT)/helpers/%,$(HELPER_SRCS))

.PHONY: all clean install deps demo test test-all unit integration helpers
.DELETE_ON_ERROR:

all: $(OUT)/ilock $(OUT)/ilocktop

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUT)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# One object from all concerns, as retsnoop does; maps shared via externs.
$(OUT)/ilock.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(OUT)/ilock.skel.h: $(OUT)/ilock.bpf.o
	$(BPFTOOL) gen skeleton $< name ilock_bpf > $@

$(OUT)/src/%.o: src/%.c $(OUT)/ilock.skel.h | $(OUT)/src
	$(CC) $(CFLAGS) -c $< -o $@

# The commit built, for --version; rewritten only when it changes, so that
# an unchanged tree does not rebuild main.o.
$(OUT)/git_version.h: FORCE | $(OUT)/src
	@v=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	printf '#define ILOCK_GIT "%s"\n' "$$v" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(OUT)/src/version.o: $(OUT)/git_version.h

.PHONY: FORCE
FORCE:

$(OUT)/ilock: $(OUT)/src/main.o $(LIB_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/ilocktop: $(OUT)/ilock
	ln -sf ilock $@

# The pure modules are compiled once under the sanitizers; each test links them.
SAN_OBJS = $(patsubst src/%.c,$(OUT)/san/%.o,$(PURE_SRCS))

.PRECIOUS: $(OUT)/san/%.o
$(OUT)/san/%.o: src/%.c | $(OUT)/san
	$(CC) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUT)/tests/%: tests/unit/%.c $(SAN_OBJS)  tests/unit/unit.h tests/unit/golden.h | $(OUT)/tests
	$(CC) $(CFLAGS) $(SAN_FLAGS) -Itests/unit $< $(SAN_OBJS) -o $@ -lm -lz

$(OUT)/helpers/%: tests/helpers/%.c | $(OUT)/helpers
	$(CC) $(CFLAGS) $< -o $@ -lpthread

helpers: $(HELPER_BINS)

# Overhead benchmark (scripts/bench/overhead): the empty-program floor, its
# loader and the metadata load. `make bench` installs perf and bpftrace via
# scripts/bench/deps.sh; BENCH_ARGS passes options (e.g. BENCH_ARGS=--quick).
BENCH_BINS := $(OUT)/bench/floor.bpf.o $(OUT)/bench/bpfload $(OUT)/bench/metaload \
	$(OUT)/bench/faultloop $(OUT)/bench/jitdump $(OUT)/bench/lookup_cost \
	$(OUT)/bench/cumview_cost $(OUT)/bench/store_cost

$(OUT)/bench/metaload: scripts/bench/metaload.c | $(OUT)/bench
	$(CC) $(CFLAGS) $< -o $@ -lpthread

$(OUT)/bench/faultloop: scripts/bench/faultloop.c | $(OUT)/bench
	$(CC) $(CFLAGS) $< -o $@

# What a read's process-title and path lookups cost (docs/PERFORMANCE.md).
$(OUT)/bench/lookup_cost: scripts/bench/lookup_cost.c $(OUT)/src/titles.o $(OUT)/src/pathcheck.o \
		$(OUT)/src/mounts.o $(OUT)/src/util.o $(OUT)/src/model.o $(OUT)/src/waiting.o \
		$(OUT)/src/hist.o $(OUT)/src/idmap.o $(OUT)/src/sigtest.o | $(OUT)/bench
	$(CC) $(CFLAGS) $(filter %.c %.o,$^) -o $@ -lm

# What ilocktop's cumulative view costs a rebuild after a renewal (docs/PERFORMANCE.md).
$(OUT)/bench/cumview_cost: scripts/bench/cumview_cost.c $(OUT)/src/top_model.o $(OUT)/src/model.o \
		$(OUT)/src/hist.o $(OUT)/src/waiting.o $(OUT)/src/titles.o $(OUT)/src/idmap.o \
		$(OUT)/src/util.o $(OUT)/src/render_text.o $(OUT)/src/mounts.o $(OUT)/src/counters.o \
		$(OUT)/src/ops.o $(OUT)/src/json.o $(OUT)/src/render_json.o $(OUT)/src/render_ops.o \
		$(OUT)/src/render_json_ops.o $(OUT)/src/ksyms.o $(OUT)/src/render_waiting.o \
		$(OUT)/src/pathcheck.o $(OUT)/src/sigtest.o | $(OUT)/bench
	$(CC) $(CFLAGS) $(filter %.c %.o,$^) -o $@ -lm -lz

# What ilocktop's intake of a changed lock costs, without a workload (docs/PERFORMANCE.md).
$(OUT)/bench/store_cost: scripts/bench/store_cost.c $(OUT)/src/top_store.o $(OUT)/src/model.o \
		$(OUT)/src/hist.o $(OUT)/src/util.o $(OUT)/src/idmap.o $(OUT)/src/waiting.o \
		$(OUT)/src/sigtest.o | $(OUT)/bench
	$(CC) $(CFLAGS) $(filter %.c %.o,$^) -o $@ -lm

.PHONY: bench bench-tools
bench-tools: $(BENCH_BINS)

bench:
	@$(AS_ROOT); sh scripts/bench/deps.sh && $(MAKE) --no-print-directory all bench-tools && \
		$(PYTHON) scripts/bench/overhead $(BENCH_ARGS)

# Benchmark helpers: empty programs on ilock's tracepoints, and their loader.
$(OUT)/bench/floor.bpf.o $(OUT)/bench/anatomy.bpf.o: $(OUT)/bench/%.bpf.o: scripts/bench/%.bpf.c \
		| $(OUT)/bench
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bench/bpfload: scripts/bench/bpfload.c | $(OUT)/bench
	$(CC) $(CFLAGS) $< -o $@ -lbpf

# A loaded program's JIT image and line info, for scripts/bench/bpf_profile.
$(OUT)/bench/jitdump: scripts/bench/jitdump.c | $(OUT)/bench
	$(CC) $(CFLAGS) $< -o $@ -lbpf

$(OUT)/bpf $(OUT)/src $(OUT)/tests $(OUT)/helpers $(OUT)/bench $(OUT)/san:
	mkdir -p $@

install: all
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(OUT)/ilock $(DESTDIR)$(BINDIR)/ilock
	ln -sf ilock $(DESTDIR)$(BINDIR)/ilocktop
	install -d $(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 contrib/ilock.bash $(DESTDIR)$(COMPLETIONDIR)/ilock
	ln -sf ilock $(DESTDIR)$(COMPLETIONDIR)/ilocktop

deps:
	@sh scripts/setup.sh

# Root is needed for BPF and loop devices. Other users get re-run under
# sudo when they have it; the whole check is one shell so it runs once.
AS_ROOT = if [ "$$(id -u)" != 0 ]; then \
	if command -v sudo >/dev/null 2>&1; then exec sudo $(MAKE) $@; fi; \
	echo "ilock: 'make $@' needs root (BPF programs and loop devices)" >&2; exit 1; fi

unit: $(UNIT_BINS)
	@sh tests/run_unit.sh $(UNIT_BINS)

integration: all helpers bench-tools
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

# The README's test command: set up, build, then every test layer.
test:
	@$(AS_ROOT); sh scripts/setup.sh && $(MAKE) --no-print-directory -j2 test-all

test-all: all helpers bench-tools $(UNIT_BINS)
	@sh tests/run_unit.sh $(UNIT_BINS)
	@$(MAKE) --no-print-directory fuzz
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

# Boot Debian's 6.1 and 6.12 cloud kernels under qemu (tcg) and run ilock
# probe and the XFS scenario in each; the host kernel's scenario runs too.
# Downloads are cached in .cache/kernels/ (docs/kernels.md). ~2 minutes: the
# guests boot side by side.
.PHONY: test-kernels
test-kernels:
	@$(AS_ROOT); $(MAKE) --no-print-directory all helpers && sh scripts/test-kernels.sh

# The integration tests against ilock built with ASan and UBSan, in a
# temporary worktree (scripts/test-asan.sh); not part of `make test`.
.PHONY: test-asan
test-asan:
	@$(AS_ROOT); sh scripts/setup.sh && SAN_FLAGS="$(SAN_FLAGS)" sh scripts/test-asan.sh

# The README's demo: set up, build, run the seed workload under ilock stat.
demo:
	@$(AS_ROOT); sh scripts/setup.sh && $(MAKE) --no-print-directory all helpers && sh scripts/demo.sh

# The recording reader and every view of report and diff (tests/fuzz/fuzz_one.h)
# under libFuzzer, for a bounded time; undefined behaviour stops it too. Seeds in
# tests/fuzz/corpus; a crash leaves its input in build/fuzz/ and fails make:
# keep it in tests/fuzz/crashers/, where the unit tests replay it.
FUZZ_TIME ?= 20
# It links the pure modules, as the unit tests do.
FUZZ_SRCS := $(PURE_SRCS)
$(OUT)/fuzz/fuzz_recfile: tests/fuzz/fuzz_recfile.c tests/fuzz/fuzz_one.h $(FUZZ_SRCS) | $(OUT)/fuzz
	$(CLANG) -g -O1 $(WARN) -std=gnu11 -Iinclude -Isrc -D_GNU_SOURCE \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< $(FUZZ_SRCS) -o $@ -lz -lm

.PHONY: fuzz
fuzz: $(OUT)/fuzz/fuzz_recfile
	rm -rf $(OUT)/fuzz/corpus && mkdir -p $(OUT)/fuzz/corpus
	$(OUT)/fuzz/fuzz_recfile -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix=$(OUT)/fuzz/ -print_final_stats=1 $(OUT)/fuzz/corpus tests/fuzz/corpus

$(OUT)/fuzz:
	mkdir -p $@

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/bpf/*.d $(OUT)/src/*.d $(OUT)/san/*.d $(OUT)/tests/*.d $(OUT)/helpers/*.d $(OUT)/bench/*.d)
