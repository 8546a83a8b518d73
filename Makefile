# causeway — build, test and demo. `make V=1` shows the commands.
#   make check   the analyzer, causeway-eval, the fixture compiler and the
#                unit tests, and the tests that need no BPF: no clang,
#                llvm or bpftool, no root, no network, no apt-get
#   make test    everything, from the packages up (CI: .ci/run)
.DELETE_ON_ERROR:
.SUFFIXES:
# Keep the BPF objects: they are intermediates of the skeletons.
.SECONDARY:

BUILD ?= build
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
SAN ?=

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -I$(BUILD)
ifneq ($(SAN),)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

ANALYZE_LIBS = -lsqlite3 -ldw -lelf -llz4 -lz
CAPTURE_LIBS = -lbpf -ldw -lelf -lz -llz4 -lpthread

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Werror=undef \
	-I$(BUILD) -I. -idirafter /usr/include/$(shell gcc -dumpmachine)

# lib/: what every program shares (the output files' rules).
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
# trace/: the trace library, the segment writer and reader (lz4, zlib),
# linked by the capture, the analyzer, the fixture compiler, gentrace and
# the tests, so that none of them links another program's objects. An
# archive: each program takes the members it calls.
TRACE_SRCS := $(wildcard trace/*.c)
TRACE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(TRACE_SRCS))
TRACE_LIB := $(BUILD)/libcwtrace.a
TRACE_LIBS = -llz4 -lz
ANALYZE_SRCS := $(wildcard analyze/*.c)
CAPTURE_SRCS := $(wildcard capture/*.c)
EXPORT_SRCS := $(wildcard export/*.c)
EXPORT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(EXPORT_SRCS))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

ANALYZE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(ANALYZE_SRCS))
CAPTURE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CAPTURE_SRCS))
# Analyzer modules without main(), for unit tests.
ANALYZE_LIB_OBJS := $(filter-out $(BUILD)/analyze/main.o,$(ANALYZE_OBJS))

TEST_PROGS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TOOLS := $(BUILD)/tests/fixturec $(BUILD)/bench/gentrace $(BUILD)/gobindump
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c)) \
	$(patsubst tests/workloads/lib/%.c,$(BUILD)/workloads/lib%.so,$(wildcard tests/workloads/lib/*.c))

HEADERS := $(wildcard schema/*.h schema/*.def trace/*.h capture/*.h analyze/*.h lib/*.h tests/*.h)

.PHONY: all clean check test test-unit test-fixtures test-san test-live deps demo demo-postgres bench bench-tools fuzz
all: $(BUILD)/causeway-analyze $(BUILD)/causeway-capture $(BUILD)/causeway-export $(BUILD)/causeway-eval $(TOOLS) $(WORKLOADS) \
	$(TEST_PROGS) $(BUILD)/bench/truthload

$(BUILD)/causeway-analyze: $(ANALYZE_OBJS) $(LIB_OBJS) $(TRACE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(ANALYZE_LIBS)

# causeway-export reads databases only: SQLite and zlib (pprof's gzip).
$(BUILD)/causeway-export: $(EXPORT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lsqlite3 -lz -lm

$(BUILD)/causeway-capture: $(CAPTURE_OBJS) $(LIB_OBJS) $(TRACE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CAPTURE_LIBS)

$(TRACE_LIB): $(TRACE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The DDL is embedded at build time so the analyzer and schema/tables.sql
# can never disagree.
$(BUILD)/tables_sql.h: schema/tables.sql
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo 'static const char cw_tables_sql[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

# format.md too, for tests/test_records.c to check its record tables
# against schema/records.def.
$(BUILD)/format_md.h: schema/format.md
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo 'static const char cw_format_md[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@
$(BUILD)/tests/test_records: $(BUILD)/format_md.h
$(BUILD)/tests/test_db: $(BUILD)/tables_sql.h
$(BUILD)/tests/test_db: ANALYZE_LIBS += -lm

$(BUILD)/lib/%.o: lib/%.c $(HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/trace/%.o: trace/%.c $(HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/analyze/%.o: analyze/%.c $(HEADERS) $(BUILD)/tables_sql.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/export/%.o: export/%.c $(HEADERS) $(wildcard export/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/capture/%.o: capture/%.c $(HEADERS) $(BPF_SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# vmlinux.h comes from the running kernel's BTF; nothing kernel-specific is
# committed (CO-RE relocates field offsets at load time).
$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)test -r /sys/kernel/btf/vmlinux || { echo "cannot build BPF programs: /sys/kernel/btf/vmlinux is missing (kernel built without CONFIG_DEBUG_INFO_BTF)" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h schema/events.h $(wildcard schema/*.def bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)llvm-strip -g $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# The fixture compiler shares the record text form with the dump.
$(BUILD)/tests/fixturec: tests/fixturec.c $(BUILD)/analyze/text.o $(TRACE_LIB) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/fixturec.c $(BUILD)/analyze/text.o $(TRACE_LIB) $(TRACE_LIBS)

# gobindump: what capture/gobin.c finds in a Go binary (tests/go/gobin.sh).
# It compiles gobin.c itself, not through capture/%.o, whose rule needs the
# BPF skeletons: make check builds it with no BPF toolchain.
$(BUILD)/gobindump: tests/tools/gobindump.c capture/gobin.c $(LIB_OBJS) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/tools/gobindump.c capture/gobin.c $(LIB_OBJS) -ldw -lelf

$(BUILD)/bench/gentrace: bench/gentrace.c $(TRACE_LIB) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ bench/gentrace.c $(TRACE_LIB) $(TRACE_LIBS)

# Unit tests link the analyzer's modules and the trace library, never a
# capture object (whose rule needs the BPF skeletons); TEST_OBJS, what one
# test links besides.
$(BUILD)/tests/test_%: tests/test_%.c $(ANALYZE_LIB_OBJS) $(LIB_OBJS) $(TRACE_LIB) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_OBJS) $(ANALYZE_LIB_OBJS) $(LIB_OBJS) $(TRACE_LIB) $(ANALYZE_LIBS)
$(BUILD)/tests/test_pb: TEST_OBJS = $(BUILD)/export/pb.o
$(BUILD)/tests/test_pb: $(BUILD)/export/pb.o

# The workloads keep frame pointers, as a program one profiles with perf's
# default call graph is built (-O2 drops them, and their CPU stacks were
# one repeated address). nofp is the program without them that
# --call-graph dwarf must unwind (live/dwarf); its flag comes after.
$(BUILD)/workloads/%: CFLAGS += -fno-omit-frame-pointer
$(BUILD)/workloads/nofp: CFLAGS += -fomit-frame-pointer
# hops: its stacks name the thread and its work, under the causal frames
# of its request (live/hops).
$(BUILD)/workloads/hops: CFLAGS += -fno-omit-frame-pointer

$(BUILD)/workloads/%: tests/workloads/%.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $< -luring

$(BUILD)/workloads/usdt_basic: include/causeway.h tests/workloads/usdt_round.h
$(BUILD)/workloads/hops $(BUILD)/workloads/pipeline $(BUILD)/workloads/taskpool: include/causeway.h \
	tests/workloads/asleep.h
$(BUILD)/workloads/tcp $(BUILD)/bench/tcp_pingpong: tests/workloads/sockio.h

# Workload libraries (tests/workloads/lib/NAME.c -> libNAME.so): what a
# workload opens with dlopen() (usdt_basic: probes attached mid-run).
$(BUILD)/workloads/lib%.so: tests/workloads/lib/%.c include/causeway.h tests/workloads/usdt_round.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ $<

# The ground-truth benchmark (bench/truth/FORMAT.md): the evaluator, which
# scores a database against a truth file, and the workload that writes one.
EVAL_SRCS := $(wildcard bench/truth/eval*.c)
$(BUILD)/causeway-eval: $(EVAL_SRCS) $(LIB_OBJS) $(wildcard bench/truth/*.h) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(EVAL_SRCS) $(LIB_OBJS) -lsqlite3 -lm

$(BUILD)/bench/truthload: $(wildcard bench/truth/truthload*.c bench/truth/*.h) include/causeway.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $(wildcard bench/truth/truthload*.c) -luring -lm

deps:
	$(Q)tests/deps.sh

# make check: what needs no BPF toolchain, root, network or packages to
# install: the units, the fixtures, the analyzer's command line, the
# evaluator and the faults tests that load no BPF (tests/run.sh --no-live).
# Nothing here may depend on $(BPF_SKELS) or vmlinux.h: the analyzer,
# causeway-eval, the tools and the unit tests link only analyze/, trace/
# and lib/ objects.
CHECK_PROGS := $(BUILD)/causeway-analyze $(BUILD)/causeway-export $(BUILD)/causeway-eval $(TOOLS) $(TEST_PROGS)
check: $(CHECK_PROGS)
	$(Q)tests/run.sh $(BUILD) --no-live --only unit,fixtures,cli,eval,export,go,faults

# make test: from nothing — packages, a clean build, every test (what
# make check runs, the live BPF captures, the faults tests that capture,
# hostile), the whole suite again under AddressSanitizer and UBSan, and
# the reader's fuzz target for FUZZ_SECONDS (60).
test: deps
	$(Q)rm -rf build build-san
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run.sh build
	$(Q)$(MAKE) --no-print-directory test-san
	$(Q)$(MAKE) --no-print-directory build/fuzz_reader
	$(Q)tests/run.sh build --only fuzz

# Under the sanitizers: units, fixtures, the CLI, and live captures and
# analyses of edges, USDT probes and a sample flood (the workloads are
# built with them too, and LeakSanitizer's own thread would count as a
# spawn in live/spawn; ASan's own qsort would stand in libc's in
# live/dwarf).
test-san:
	$(Q)$(MAKE) --no-print-directory BUILD=build-san SAN=1 all
	$(Q)tests/run.sh build-san --live wake,usdt,flood

test-unit test-fixtures test-live: all
	$(Q)tests/run.sh $(BUILD) --only $(patsubst test-%,%,$@)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/demo.sh $(BUILD)

# PostgreSQL's own probes: which query blocked which (a throwaway cluster).
demo-postgres: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/demo-postgres.sh $(BUILD)

bench: all bench-tools
	$(Q)bench/analyze $(BUILD)
	$(Q)bench/capture $(BUILD)

# Bench-only tools, not part of all: the floor of bench/capture (empty BPF
# programs on the capture's hooks, listed by bench/floor-gen.sh from
# capture/classes.c), its io_uring and net workloads, and cpurun (a
# command's CPU time).
bench-tools: $(BUILD)/bench/floor $(BUILD)/bench/uring_storm $(BUILD)/bench/tcp_pingpong \
	$(BUILD)/bench/cpurun $(BUILD)/bench/usdt_cost $(BUILD)/bench/blk_sync \
	$(BUILD)/bench/uprobe_cost

$(BUILD)/bench/floor.bpf.c: bench/floor-gen.sh capture/classes.c
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)bench/floor-gen.sh capture/classes.c > $@

$(BUILD)/bench/floor.bpf.o: $(BUILD)/bench/floor.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)llvm-strip -g $@

$(BUILD)/bench/floor.skel.h: $(BUILD)/bench/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# The floor decides which hooks to attach with the capture's own class
# table and kernel probes.
FLOOR_OBJS := $(addprefix $(BUILD)/capture/,classes.o probe.o log.o) $(LIB_OBJS)
$(BUILD)/bench/floor: bench/floor.c $(BUILD)/bench/floor.skel.h $(FLOOR_OBJS) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/bench $(LDFLAGS) -o $@ bench/floor.c $(FLOOR_OBJS) $(CAPTURE_LIBS)

$(BUILD)/bench/uring_storm: bench/uring_storm.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -luring

$(BUILD)/bench/tcp_pingpong: bench/tcp_pingpong.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $<

$(BUILD)/bench/blk_sync: bench/blk_sync.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# usdt_cost: an untraced adapter probe's cost (include/causeway.h).
$(BUILD)/bench/usdt_cost: bench/usdt_cost.c include/causeway.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(BUILD)/bench/cpurun: bench/cpurun.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# sqlceil: what the database alone costs on rows of a trace's shape, the
# analyzer's own writer with no join (the ceiling of its throughput).
bench-tools: $(BUILD)/bench/sqlceil
$(BUILD)/bench/sqlceil: bench/sqlceil.c $(ANALYZE_LIB_OBJS) $(LIB_OBJS) $(TRACE_LIB) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ANALYZE_LIB_OBJS) $(LIB_OBJS) $(TRACE_LIB) $(ANALYZE_LIBS)

# rewrite: the segment writer's CPU per record on a real trace's records.
bench-tools: $(BUILD)/bench/rewrite
$(BUILD)/bench/rewrite: bench/rewrite.c $(TRACE_LIB) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TRACE_LIB) $(TRACE_LIBS)

# symbench: the symbolizer's frames/s on cached and on cold addresses, and
# the offline unwinder's stacks/s.
SYMBENCH_OBJS := $(addprefix $(BUILD)/analyze/,maps.o symbol.o unwind.o ksyms.o) $(LIB_OBJS)
bench-tools: $(BUILD)/bench/symbench
$(BUILD)/bench/symbench: bench/symbench.c $(SYMBENCH_OBJS) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ bench/symbench.c $(SYMBENCH_OBJS) -ldw -lelf

# A libFuzzer target for the reader and the dump; make test runs it for a
# minute (tests/fuzz.sh), make fuzz for DURATION seconds (600).
DURATION ?= 600
fuzz: $(BUILD)/fuzz_reader $(BUILD)/tests/fixturec
	$(Q)FUZZ_SECONDS=$(DURATION) tests/fuzz.sh $(BUILD)

FUZZ_SRCS := tests/fuzz_reader.c trace/reader.c trace/format.c analyze/dump.c analyze/text.c
$(BUILD)/fuzz_reader: $(FUZZ_SRCS) $(HEADERS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. -o $@ \
		$(FUZZ_SRCS) -llz4 -lz

clean:
	$(call msg,CLEAN,build build-san)
	$(Q)rm -rf build build-san

# uprobe_cost: the targets of bench/uprobe-cost (what one uprobe hit costs).
$(BUILD)/bench/uprobe_cost: bench/uprobe_cost.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<
