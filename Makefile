# SPDX-License-Identifier: MIT
# qpool: one non-recursive Makefile. Each part gets -Ilib -I<part> only.

# The version is lib/version.h's, the one place it is written.
VERSION   := $(shell sed -n 's/^\#define QPOOL_VERSION "\(.*\)"$$/\1/p' lib/version.h)
PKGS      := libcgroup hwloc sqlite3 libpq libsystemd cunit jansson inih munge
# nftables: t-hosts-netem's 5% loss where the kernel has no netem.
# postgresql: the tests' private server for the store on PostgreSQL.
# prometheus: promtool and a real Prometheus for t-metrics and dist/prometheus.
# ruby: t-ood runs Open OnDemand's own adapters.
# strace: t-lease-one-commit counts qpoold's syncs of its store.
DEB_PKGS  := libcgroup-dev libhwloc-dev libsqlite3-dev libpq-dev postgresql libsystemd-dev \
             libcunit1-dev libjansson-dev libinih-dev pkg-config gcc make \
             mandoc sqlite3 passwd procps util-linux python3 \
             munge libmunge-dev iproute2 nftables libpmix-dev \
             openmpi-bin libopenmpi-dev mpich libmpich-dev libpmi2-0-dev prometheus ruby strace
CC        ?= cc
# A sanitized build lives apart: make does not track flags, so objects of
# one kind must never be reused for the other. tests/ read BUILD too.
BUILD     ?= build$(if $(SANITIZE),-san)
export BUILD
BIN       := $(BUILD)/bin

WARN := -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
        -Wmissing-prototypes -Wformat=2 -Wundef -Wimplicit-fallthrough \
        -fno-common -Wno-unused-parameter
ifdef CI
WARN += -Werror
endif
ifdef SANITIZE
SAN := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
# gcc's sanitizer runtimes linked into each program, not loaded: a
# dynamic libubsan is 6 MB of zeroed data that LeakSanitizer scans at
# every exit, and the libraries' symbols are bound at every start. Per
# process here: 3,630 -> 2,000 page faults, 10.2 -> 5.4 ms of CPU
# (docs/TESTING.md, "The ASan pass"). clang links its runtimes so already.
SAN_LD := $(SAN) $(if $(findstring gcc,$(shell $(CC) -v 2>&1 | tail -n 1)),$(if $(findstring address,$(SANITIZE)),-static-libasan) $(if $(findstring undefined,$(SANITIZE)),-static-libubsan))
endif
OPT      ?= -O2 -g
CFLAGS   += $(OPT) $(WARN) $(SAN) -D_GNU_SOURCE -MMD -MP
LDFLAGS  += $(SAN_LD) -Wl,--as-needed

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libpq is loaded at run time by a store on PostgreSQL, never linked
# (scheduler/jobstore-pg.c, pq_load): its headers only.
PKG_LIBS   = $(shell pkg-config --libs $(filter-out libpq,$(PKGS)) 2>/dev/null) -lm
# The commands are short-lived processes (one qsub per job): they are
# static PIEs, with no dynamic loader to map and relocate libraries at each
# start (measured here: qsub CPU per submit 1.04 -> 0.78 ms, jansson and
# inih alone linked in 1.04 -> 0.9). No command resolves users or groups
# (qpoold takes identity from the socket), so glibc's NSS is never needed;
# --fatal-warnings turns the linker's warning about a static getpwnam & co.
# into an error, should one ever be added. ASan needs a dynamic libc.
CMD_LIBS   = $(shell pkg-config --libs jansson inih munge 2>/dev/null)
ifdef SANITIZE
CMD_LDFLAGS =
else
CMD_LDFLAGS = -static-pie -Wl,--fatal-warnings
endif

# Parts, each a set of objects; main.c is the daemon's entry point only.
LIB_SRC     := $(wildcard lib/*.c)
# The front ends, which only the commands link: the client side, then each
# dialect (its parsers and views), so the daemons link neither dialect.
CLIENT_SRC  := $(wildcard client/*.c)
PBS_SRC     := $(wildcard pbs/*.c)
SLURM_SRC   := $(wildcard slurm/*.c)
SCHED_SRC   := $(filter-out scheduler/main.c,$(wildcard scheduler/*.c))
IQS_SRC     := $(wildcard queue-preproc/*.c)
NODED_SRC   := $(filter-out noded/main.c,$(wildcard noded/*.c))
WRAP_SRC    := $(filter-out wrappers/main.c wrappers/byhand-main.c,$(wildcard wrappers/*.c))
ACCT_SRC    := $(wildcard accounting/*.c)
CMD_NAMES   := $(patsubst commands/%.c,%,$(wildcard commands/*.c))
SLURM_CMD_NAMES := $(patsubst slurm/commands/%.c,%,$(wildcard slurm/commands/*.c))
PMI_SRC     := $(filter-out pmi/main.c,$(wildcard pmi/*.c))
UNIT_SRC    := $(wildcard tests/unit/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIB_OBJ   := $(call obj,$(LIB_SRC))
FRONT_A   := $(BUILD)/libqpool-slurm.a $(BUILD)/libqpool-client.a $(BUILD)/libqpool-pbs.a
SCHED_OBJ := $(call obj,$(SCHED_SRC))
IQS_OBJ   := $(call obj,$(IQS_SRC))
NODED_OBJ := $(call obj,$(NODED_SRC))
WRAP_OBJ  := $(call obj,$(WRAP_SRC))
GDED_OBJ  := $(call obj,$(filter-out wrappers/byhand.c,$(WRAP_SRC)))
ACCT_OBJ  := $(call obj,$(ACCT_SRC))
PMI_OBJ   := $(call obj,$(PMI_SRC))
UNIT_OBJ  := $(call obj,$(UNIT_SRC))

BINS := $(BIN)/qpoold $(BIN)/qnoded $(BIN)/gded $(BIN)/gded-byhand $(BIN)/qpool-pmi \
        $(addprefix $(BIN)/,$(CMD_NAMES)) $(addprefix $(BIN)/,$(SLURM_CMD_NAMES))

# gded is exec'ed for every job: jansson linked in (its archive when
# installed), no hwloc, so ld.so maps libc alone. By hand, which needs
# hwloc, is gded-byhand (wrappers/main.c says why).
JANSSON_A := $(wildcard $(shell pkg-config --variable=libdir jansson 2>/dev/null)/libjansson.a)
GDED_LIBS := $(if $(JANSSON_A),$(JANSSON_A),$(shell pkg-config --libs jansson 2>/dev/null))

.PHONY: all deps check unit integration manlint circles demo bench clean fuzz fuzz-replay fuzz-libfuzzer stress
all: $(BINS) $(BUILD)/tests/unit $(BUILD)/bench/floor $(BUILD)/bench/pass-gpu $(BUILD)/bench/pass-estimate $(BUILD)/bench/hook-exec

# Per-part include paths: lib/ sees only itself; a part sees lib/ and itself.
$(BUILD)/obj/lib/%.o: CPPFLAGS_PART = -Ilib
$(BUILD)/obj/scheduler/%.o: CPPFLAGS_PART = -Ilib -Ischeduler -Iqueue-preproc
$(BUILD)/obj/queue-preproc/%.o: CPPFLAGS_PART = -Ilib -Iqueue-preproc
$(BUILD)/obj/noded/%.o: CPPFLAGS_PART = -Ilib -Inoded
$(BUILD)/obj/wrappers/%.o: CPPFLAGS_PART = -Ilib -Iwrappers
$(BUILD)/obj/accounting/%.o: CPPFLAGS_PART = -Ilib -Iaccounting
# qpool-pmi, the per-node PMI server of a job: the one part that sees libpmix.
$(BUILD)/obj/pmi/%.o: CPPFLAGS_PART = -Ilib -Ipmi $(shell pkg-config --cflags pmix 2>/dev/null)
# The front ends, in layers: pbs/ (job scripts and the request they make,
# PBS's views) sees lib/ only; client/ (connections, submission, job
# operations) sees pbs/; slurm/ (Slurm's options and views, over the same
# request and client) sees both. Nothing below sees what is above it.
$(BUILD)/obj/client/%.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs
$(BUILD)/obj/pbs/%.o: CPPFLAGS_PART = -Ilib -Ipbs
$(BUILD)/obj/slurm/%.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs -Islurm
$(BUILD)/obj/commands/%.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs
$(BUILD)/obj/slurm/commands/%.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs -Islurm
# qacct is the reporting side of accounting/: it links that part.
$(BUILD)/obj/commands/qacct.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs -Iaccounting
$(BUILD)/obj/tests/unit/%.o: CPPFLAGS_PART = -Ilib -Iclient -Ipbs -Islurm -Ischeduler -Iqueue-preproc -Inoded -Iwrappers -Iaccounting
$(BUILD)/obj/bench/pass-gpu.o: CPPFLAGS_PART = -Ilib -Ischeduler -Iqueue-preproc
$(BUILD)/obj/bench/pass-estimate.o: CPPFLAGS_PART = -Ilib -Ischeduler -Iqueue-preproc

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CPPFLAGS) $(CPPFLAGS_PART) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/libqpool.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libqpool-client.a: $(call obj,$(CLIENT_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libqpool-pbs.a: $(call obj,$(PBS_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libqpool-slurm.a: $(call obj,$(SLURM_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BIN)/qpoold: $(call obj,scheduler/main.c) $(SCHED_OBJ) $(IQS_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
$(BIN)/qnoded: $(call obj,noded/main.c) $(NODED_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
# -z now: the resident launcher binds every symbol once, and the wrappers
# it forks inherit that instead of each resolving its own (issue 39).
$(BIN)/gded: $(call obj,wrappers/main.c) $(GDED_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -Wl,-z,now -o $@ $^ $(GDED_LIBS)
$(BIN)/gded-byhand: $(call obj,wrappers/byhand-main.c) $(WRAP_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
$(BIN)/qpool-pmi: $(call obj,pmi/main.c) $(PMI_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs pmix jansson hwloc 2>/dev/null) -lpthread
$(BIN)/qacct: $(BUILD)/obj/commands/qacct.o $(ACCT_OBJ) $(FRONT_A) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CMD_LDFLAGS) -o $@ $^ $(CMD_LIBS) -lm
$(addprefix $(BIN)/,$(filter-out qacct,$(CMD_NAMES))): $(BIN)/%: $(BUILD)/obj/commands/%.o $(FRONT_A) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CMD_LDFLAGS) -o $@ $^ $(CMD_LIBS)
$(addprefix $(BIN)/,$(SLURM_CMD_NAMES)): $(BIN)/%: $(BUILD)/obj/slurm/commands/%.o $(FRONT_A) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CMD_LDFLAGS) -o $@ $^ $(CMD_LIBS)

# bench/floor: what the machine allows a contained launch, no qpool in it
# (make bench prints it beside qpool's own figures).
# Linked as the commands are: its first-submit stands for qsub's process.
$(BUILD)/bench/floor: $(BUILD)/obj/bench/floor.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CMD_LDFLAGS) -o $@ $^

# bench/hook-exec: a hook's own exec through lib/hook.c's runner, as gded
# runs it (bench/prolog-cost, issue 37).
$(BUILD)/obj/bench/hook-exec.o: CPPFLAGS_PART = -Ilib
$(BUILD)/bench/hook-exec: $(BUILD)/obj/bench/hook-exec.o $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# bench/pass-estimate: start estimates in process (issue 35).
$(BUILD)/bench/pass-estimate: $(BUILD)/obj/bench/pass-estimate.o $(SCHED_OBJ) $(IQS_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# bench/pass-gpu: the scheduling pass in process, with GPUs (issue 27).
$(BUILD)/bench/pass-gpu: $(BUILD)/obj/bench/pass-gpu.o $(SCHED_OBJ) $(IQS_OBJ) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/unit: $(UNIT_OBJ) $(SCHED_OBJ) $(IQS_OBJ) $(NODED_OBJ) $(WRAP_OBJ) $(ACCT_OBJ) $(FRONT_A) $(BUILD)/libqpool.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# Installs what is missing (root), or prints the exact command (not root).
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "deps: missing packages; run as root:"; \
	  echo "  apt-get update && apt-get install -y$$missing"; exit 1; \
	fi

check: deps
	$(MAKE) all fuzz-replay
	tests/run

unit: all
	BUILD=$(BUILD) tests/run --unit

integration: all
	tests/run --integration

manlint:
	tests/manlint

# No circle among a daemon's files (docs/ARCHITECTURE.md, "qpoold's layers").
circles: all
	tests/circles

demo: deps
	$(MAKE) all
	tests/demo

# BENCH_BASE=REV: then issue 39's figures for REV's build against this one,
# taking turns (bench/issue39-ab).
bench: deps
	$(MAKE) all
	bench/run
	$(if $(BENCH_BASE),bench/issue39-ab --rev $(BENCH_BASE))

# Fuzzing (tests/fuzz/): one harness per decoder, each with the libFuzzer
# entry point. make check replays seeds + mutations through a plain main()
# (gcc, ASan+UBSan, no clang needed); make fuzz runs libFuzzer at length.
# Both keep their objects apart from the normal ones (other flags).
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 300
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_DEPS    := $(LIB_SRC) $(PBS_SRC) $(WRAP_SRC) tests/fuzz/util.c
FZ_REPLAY    := $(BUILD)/fuzz/replay
FZ_LF        := $(BUILD)/fuzz/libfuzzer
fzobj = $(patsubst %.c,$(1)/obj/%.o,$(2))

$(FZ_REPLAY)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -O1 -g $(WARN) $(FUZZ_SAN) -D_GNU_SOURCE -MMD -MP -Ilib -Ipbs -Iwrappers -Itests/fuzz $(PKG_CFLAGS) -c $< -o $@
$(FZ_LF)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -D_GNU_SOURCE -MMD -MP -Ilib -Ipbs -Iwrappers -Itests/fuzz $(PKG_CFLAGS) -c $< -o $@
$(FZ_REPLAY)/fuzz_%: $(call fzobj,$(FZ_REPLAY),tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(FUZZ_DEPS))
	$(CC) $(FUZZ_SAN) -o $@ $^ $(PKG_LIBS)
$(FZ_LF)/fuzz_%: $(call fzobj,$(FZ_LF),tests/fuzz/fuzz_%.c $(FUZZ_DEPS))
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

# Every object of the harnesses comes from a pattern chain: keep them all.
# Make deletes a chain's intermediate files after the first build; the
# next one reads their .d files, which name them as targets, and so
# builds them again (70 files, each time make check ran after a build).
.SECONDARY: $(call fzobj,$(FZ_REPLAY),tests/fuzz/driver.c $(FUZZ_DEPS)) $(call fzobj,$(FZ_LF),$(FUZZ_DEPS)) \
	$(foreach n,$(FUZZ_NAMES),$(call fzobj,$(FZ_REPLAY),tests/fuzz/fuzz_$(n).c) $(call fzobj,$(FZ_LF),tests/fuzz/fuzz_$(n).c))

fuzz-replay: $(addprefix $(FZ_REPLAY)/fuzz_,$(FUZZ_NAMES))
fuzz-libfuzzer: $(addprefix $(FZ_LF)/fuzz_,$(FUZZ_NAMES))

fuzz: deps
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) missing: apt-get install clang"; exit 1; }
	$(MAKE) all fuzz-libfuzzer
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run --long

# The long crash and hostile-input runs (tests/stress/), STRESS_ROUNDS each.
STRESS_ROUNDS ?= 25
stress: deps
	$(MAKE) all
	STRESS_ROUNDS=$(STRESS_ROUNDS) tests/stress/run

clean:
	rm -rf $(BUILD)

include dist/dist.mk

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz -name '*.d' 2>/dev/null)
