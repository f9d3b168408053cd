# SPDX-License-Identifier: Apache-2.0
#
# librip - non-recursive Makefile.  Everything is built into build/:
#   build/librip.so build/librip.a   the library (lib/)
#   build/librip-preload.so          the resource hooks (preload/)
#   build/librip-track.so            rip run --track's audit library (preload/track.c)
#   build/libripread.a               formats and sources (read/)
#   build/libripanalysis.a           passes over events (analysis/)
#   build/libriprecord.a             recording: consumer, trace writer, relayd (record/)
#   build/rip                        the command (tools/ on the three archives)
#   build/examples/*                 examples/*.c
#   build/tests/*                    tests/unit/*.c, tests/integ/*.c helpers
#   build/clang/                     the same built with clang (make clang, part of check)
#   build/aarch64/                   lib/ and the headers' programs for aarch64 (make cross-aarch64)
#   build/asan/ build/tsan/          rip under ASan, the concurrency tests under TSan (tests)
# Targets: all (default), check, demo, bench, fuzz, install, clean, clang, cross-aarch64.

VERSION := 0.1.0
SOMAJOR := 0

CC ?= cc
CLANG ?= clang
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
BASE := -std=gnu11 -D_GNU_SOURCE -DRIP_VERSION_STRING=\"$(VERSION)\" -Iinclude -fno-omit-frame-pointer -MMD -MP
# read/, analysis/, record/ and tools/ include each other's headers by folder: "read/evread.h"
TREE := -I.
# Warnings are errors for make check (CI runs it on a clean tree), never for a plain make.
# Objects a plain make built already are not compiled again: their warnings showed then.
WERROR ?= $(if $(filter check,$(MAKECMDGOALS)),-Werror)
ALL_CFLAGS := $(BASE) $(WARN) $(WERROR) $(CFLAGS)

# Missing Debian packages are installed by the target `deps` (mk/deps.sh), which every
# recipe that needs them waits for: the libraries for the readers, and the test tools too
# when the goal is check, bench, fuzz or tests (which builds the fuzz harnesses with clang
# and libFuzzer).  Reading this Makefile installs nothing (make clean,
# make -n), so libdw's flags are asked for when a recipe runs, after `deps`.
DEPS_FOR := $(if $(filter check bench fuzz tests cross-aarch64,$(MAKECMDGOALS)),check,build)
DW_CFLAGS = $(shell pkg-config --cflags libdw libelf zlib libzstd 2>/dev/null)
DW_LIBS = $(shell pkg-config --libs libdw libelf zlib libzstd 2>/dev/null)

LIB_SRC := $(wildcard lib/*.c)
PRELOAD_SRC := $(filter-out preload/track.c,$(wildcard preload/*.c))
READ_SRC := $(wildcard read/*.c)
ANALYSIS_SRC := $(wildcard analysis/*.c)
RECORD_SRC := $(wildcard record/*.c)
TOOL_SRC := $(wildcard tools/*.c)
EX_SRC := $(wildcard examples/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
INTEG_SRC := $(wildcard tests/integ/*.c)
INTEG_CXX_SRC := $(wildcard tests/integ/*.cc)
MOD_SRC := $(wildcard modules/*.c)
BENCH_SRC := $(filter-out bench/lttng-%.c bench/funcs-hooks.c,$(wildcard bench/*.c))

LIB_PIC_OBJ := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/pic/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
READ_OBJ := $(READ_SRC:%.c=$(BUILD)/obj/%.o)
ANALYSIS_OBJ := $(ANALYSIS_SRC:%.c=$(BUILD)/obj/%.o)
RECORD_OBJ := $(RECORD_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
EXAMPLES := $(EX_SRC:examples/%.c=$(BUILD)/examples/%)
MODULES := $(MOD_SRC:modules/%.c=$(BUILD)/modules/%.so)
UNIT := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
INTEG := $(INTEG_SRC:tests/integ/%.c=$(BUILD)/tests/integ/%) \
	$(INTEG_CXX_SRC:tests/integ/%.cc=$(BUILD)/tests/integ/%) \
	$(BUILD)/tests/integ/funcprog-patch $(BUILD)/tests/integ/funcprog-patch-clang \
	$(BUILD)/tests/integ/funcprog-patch-nopie $(BUILD)/tests/integ/funcprog-clang \
	$(BUILD)/tests/integ/funcprog-nofp $(BUILD)/tests/integ/funcprog-sib \
	$(BUILD)/tests/integ/funcprog-cxx-patch $(BUILD)/tests/integ/funcnop-clang \
	$(BUILD)/tests/integ/funcnop-own $(BUILD)/tests/integ/fnbt-patch \
	$(BUILD)/tests/integ/fnbt-patch-clang $(BUILD)/tests/integ/fnbtx-patch \
	$(BUILD)/tests/integ/fnfore-patch $(BUILD)/tests/integ/fngen-patch
BENCHES := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%) $(BUILD)/bench/malloc-nofp \
	$(BUILD)/bench/funcs-instr $(BUILD)/bench/funcs-instr-a $(BUILD)/bench/funcs-empty \
	$(BUILD)/bench/funcs-emptyso \
	$(BUILD)/bench/funcs-floor $(BUILD)/bench/funcs-patch $(BUILD)/bench/many-fn

SONAME := librip.so.$(SOMAJOR)
LIBSO := $(BUILD)/librip.so
LIBA := $(BUILD)/librip.a
PRELOAD := $(BUILD)/librip-preload.so
TRACK := $(BUILD)/librip-track.so
LIBREAD := $(BUILD)/libripread.a
LIBANALYSIS := $(BUILD)/libripanalysis.a
LIBRECORD := $(BUILD)/libriprecord.a
RIP := $(BUILD)/rip
RPATH := -Wl,-rpath,'$$ORIGIN/..' -Wl,-rpath,'$$ORIGIN/../..'
LINK_RIP := -L$(BUILD) -lrip $(RPATH) -pthread

all: $(LIBSO) $(LIBA) $(if $(TOOL_SRC),$(RIP)) $(if $(PRELOAD_SRC),$(PRELOAD) $(TRACK)) $(EXAMPLES) \
	$(BUILD)/librip.pc $(if $(PRELOAD_SRC),$(MODULES))

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

# The function-tracing hooks run at every call of an instrumented program: no frame pointer
# to set up (they find the caller's frame by its return address, lib/func.c).
$(BUILD)/pic/lib/func.o $(BUILD)/obj/lib/func.o: ALL_CFLAGS += -fomit-frame-pointer
# ... and on x86-64 no vector register: the patched entries' trampolines (lib/patch.c) call its
# fast paths before they save any (lib/func.c refuses to build otherwise).
FN_GRO = $(if $(findstring x86_64,$(shell $(CC) -dumpmachine)),-mgeneral-regs-only)
$(BUILD)/pic/lib/func.o $(BUILD)/obj/lib/func.o $(BUILD)/tsan/lib/func.o: ALL_CFLAGS += $(FN_GRO)

# rip report's pass without gcc's SLP vectorizer: it made the pass's pairs of counters and its
# copies of events into 16-byte loads, adds and stores with shuffles between them (callgrind,
# rip report on 4M events: 877.3M -> 833.3M instructions without it; analysis/report.c).
NO_SLP := $(if $(findstring clang,$(shell $(CC) --version)),,-fno-tree-slp-vectorize)
$(BUILD)/obj/analysis/report.o: ALL_CFLAGS += $(NO_SLP)

$(BUILD)/obj/read/%.o: read/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(TREE) -c $< -o $@

$(BUILD)/obj/analysis/%.o: analysis/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(TREE) -c $< -o $@

$(BUILD)/obj/record/%.o: record/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(TREE) -c $< -o $@

$(BUILD)/obj/tools/%.o: tools/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(TREE) -c $< -o $@

# librip.so's exports (lib/librip.map), through the C preprocessor: the node of glibc's version of
# its hooks of -finstrument-functions is the target architecture's (lib/func.c, RIP_LIBSO: the
# aliases at that version, in librip.so only).
$(BUILD)/pic/lib/func.o: ALL_CFLAGS += -DRIP_LIBSO
$(BUILD)/librip.map: lib/librip.map
	@mkdir -p $(@D)
	$(CC) -E -P -x c -o $@ $<

$(LIBSO).$(VERSION): $(LIB_PIC_OBJ) $(BUILD)/librip.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(BUILD)/librip.map -Wl,-z,defs \
		-Wl,-z,now -o $@ $(LIB_PIC_OBJ) -pthread -ldl

$(LIBSO): $(LIBSO).$(VERSION)
	ln -sf librip.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf librip.so.$(VERSION) $@

# The resource tracer: hooks only, on top of librip.so (found next to it); libunwind is
# dlopen'd RTLD_LOCAL at run time (preload/backtrace.c says why).  The bounds of the section
# of RIP_PL_REAL's records stay inside the object.
# preload.map: the glibc versions of the two pthread_cond_wait (preload/wait.c).  -fexceptions:
# the wait records are cleared by cleanups that cancellation's unwind runs too.
$(PRELOAD_OBJ): ALL_CFLAGS += -fexceptions
$(PRELOAD): $(PRELOAD_OBJ) $(LIBSO) preload/preload.map
	$(CC) -shared -Wl,-z,defs -Wl,-z,now -Wl,-z,start-stop-visibility=hidden -o $@ $(PRELOAD_OBJ) \
		-Wl,--version-script=preload/preload.map \
		-L$(BUILD) -lrip -Wl,-rpath,'$$ORIGIN' -ldl -pthread

# rip run --track's LD_AUDIT library: loaded by the loader into a namespace of its own, it
# links nothing of ours (it finds librip-preload.so's module interface in the program's).
$(TRACK): $(BUILD)/pic/preload/track.o
	$(CC) -shared -Wl,-z,defs -Wl,-z,now -o $@ $<

# The tracing modules rip run --module loads (rip/module.h): built against the header only;
# librip-preload.so, preloaded first, defines what they call.  -fno-builtin: memtransfer
# defines memcpy and friends; no prototypes: the wrapped libraries' headers are not included.
$(BUILD)/modules/%.so: modules/%.c include/rip/module.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -fno-builtin -fPIC -fvisibility=hidden -shared \
		-Wl,-z,now -o $@ $<

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBREAD): $(READ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBANALYSIS): $(ANALYSIS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBRECORD): $(RECORD_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(RIP): $(TOOL_OBJ) $(LIBANALYSIS) $(LIBRECORD) $(LIBREAD)
	$(CC) -o $@ $(TOOL_OBJ) $(LIBANALYSIS) $(LIBRECORD) $(LIBREAD) $(DW_LIBS) -lm -ldl -pthread

# Where rip run --module looks after the directories next to rip: the install's.
$(BUILD)/obj/record/prog.o: ALL_CFLAGS += -DRIP_MODULE_DIR=\"$(LIBDIR)/rip/modules\"

$(BUILD)/examples/%: examples/%.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LINK_RIP)

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIBSO) $(LIBANALYSIS) $(LIBRECORD) $(LIBREAD) | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(TREE) -Itests -o $@ $< $(LIBANALYSIS) $(LIBRECORD) $(LIBREAD) \
		$(LINK_RIP) $(DW_LIBS) -lm

$(BUILD)/tests/integ/%: tests/integ/%.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LINK_RIP)

# The function-tracing tests' programs: every function of them calls the hooks of lib/func.c.
# (The flag in the recipe, not a target-specific ALL_CFLAGS: make passes those on to the
# prerequisites it builds for the target, and librip built with the hooks recurses.)
$(BUILD)/tests/integ/funcprog: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

# A process that forks from inside traced calls (tests/integ/func-fork.sh).
$(BUILD)/tests/integ/funcfork: tests/integ/funcfork.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

# A program linked with librip.a, not librip.so (tests/integ/static-preload.sh).
$(BUILD)/tests/integ/static_snap: tests/integ/static_snap.c $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIBA) -pthread -ldl

# A function gcc copies for its calls with constant arguments (tests/integ/func-clone.sh).
$(BUILD)/tests/integ/fnclone: tests/integ/fnclone.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fpatchable-function-entry=5 $(if $(NO_ICF),-fipa-cp-clone) -Itests \
		-o $@ $< $(LINK_RIP)

# ucontext coroutines whose functions return through uc_link (tests/integ/func-uclink.sh).
$(BUILD)/tests/integ/func_uclink: tests/integ/func_uclink.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

# Traced functions at the top of a hand-switched stack, no frame pointers (tests/integ/func-stacktop.sh).
$(BUILD)/tests/integ/fn_stacktop: tests/integ/fn_stacktop.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -fomit-frame-pointer -Itests -o $@ $< $(LINK_RIP)

# funcprog again with nops at every function's entry, by each compiler (their nops differ);
# no sibling calls and no folding of identical functions, so that its paths are the ones the
# -finstrument-functions build has (a function that ends by jumping to another leaves the stack).
PATCH_FLAGS := -fpatchable-function-entry=5 -fno-optimize-sibling-calls
NO_ICF := $(if $(findstring clang,$(shell $(CC) --version)),,-fno-ipa-icf)
$(BUILD)/tests/integ/funcprog-patch: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PATCH_FLAGS) $(NO_ICF) -Itests -o $@ $< $(LINK_RIP)

# funcnop (tests/integ/funcnop.sh): -finstrument-functions, by each compiler, with a library built
# the same way loaded at start, whose hook calls librip turns into nops (lib/nop.c)
$(BUILD)/tests/libfuncnop.so: tests/data/funcnop-lib.c tests/data/funcnop.h $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

$(BUILD)/tests/libfuncnop-clang.so: tests/data/funcnop-lib.c tests/data/funcnop.h $(LIBSO)
	@mkdir -p $(@D)
	$(CLANG) $(BASE) $(WARN) $(WERROR) $(CFLAGS) -fPIC -shared -finstrument-functions -Itests \
		-o $@ $< $(LINK_RIP)

$(BUILD)/tests/integ/funcnop: tests/integ/funcnop.c tests/data/funcnop.h $(BUILD)/tests/libfuncnop.so
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -Itests -o $@ $< -L$(BUILD)/tests -lfuncnop \
		$(LINK_RIP)

$(BUILD)/tests/integ/funcnop-own: tests/integ/funcnop.c tests/data/funcnop.h $(BUILD)/tests/libfuncnop.so
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -DNOP_OWN_HOOKS -Itests -o $@ $< \
		-L$(BUILD)/tests -lfuncnop $(LINK_RIP)

$(BUILD)/tests/integ/funcnop-clang: tests/integ/funcnop.c tests/data/funcnop.h \
		$(BUILD)/tests/libfuncnop-clang.so
	@mkdir -p $(@D)
	$(CLANG) $(BASE) $(WARN) $(WERROR) $(CFLAGS) -finstrument-functions -Itests -o $@ $< \
		-L$(BUILD)/tests -lfuncnop-clang $(LINK_RIP)

# Sibling calls, and stacks 8 bytes off the ABI's alignment (gcc's own calls of a chain it
# knows needs none; production builds have no frame pointers), through patched entries.
$(BUILD)/tests/integ/fntail: ALL_CFLAGS += -fpatchable-function-entry=5 -fomit-frame-pointer
$(BUILD)/tests/integ/fnsigret: ALL_CFLAGS += -fpatchable-function-entry=5 -fomit-frame-pointer

# gcc's nops in an executable loaded at 4 MiB: no pad is reachable, rip enable says so
$(BUILD)/tests/integ/funcprog-patch-nopie: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PATCH_FLAGS) -fno-pie -no-pie -Itests -o $@ $< $(LINK_RIP)

# funcprog without frame pointers: the hooks find each function's return address by looking for it.
$(BUILD)/tests/integ/funcprog-nofp: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fomit-frame-pointer -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

# funcprog with patched entries and sibling calls on: one return for several patched entries.
$(BUILD)/tests/integ/funcprog-sib: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fpatchable-function-entry=5 -foptimize-sibling-calls -Itests -o $@ $< \
		$(LINK_RIP)

# funcprog by clang: its hooks of inlined functions, as gcc's, come from the frame they went into.
$(BUILD)/tests/integ/funcprog-clang: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CLANG) $(BASE) $(WARN) $(WERROR) $(CFLAGS) -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

$(BUILD)/tests/integ/funcprog-patch-clang: tests/integ/funcprog.c $(LIBSO)
	@mkdir -p $(@D)
	$(CLANG) $(BASE) $(WARN) $(WERROR) $(CFLAGS) $(PATCH_FLAGS) -Itests -o $@ $< $(LINK_RIP)

# fnbt (tests/integ/func-unwind.sh): patchable by each compiler, its symbols for backtrace_symbols
$(BUILD)/tests/integ/fnbt-patch: tests/integ/fnbt.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PATCH_FLAGS) $(NO_ICF) -rdynamic -o $@ $<

$(BUILD)/tests/integ/fnbt-patch-clang: tests/integ/fnbt.c
	@mkdir -p $(@D)
	$(CLANG) $(BASE) $(WARN) $(WERROR) $(CFLAGS) $(PATCH_FLAGS) -rdynamic -o $@ $<

# fnfore (tests/integ/func-unwind.sh): a catch of its own personality, through patchable frames
$(BUILD)/tests/integ/fnfore-patch: tests/integ/fnfore.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PATCH_FLAGS) $(NO_ICF) -o $@ $<

# fngen (tests/integ/func-gen.sh): a generator switched by its own assembly, patchable
$(BUILD)/tests/integ/fngen-patch: tests/integ/fngen.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PATCH_FLAGS) $(NO_ICF) -o $@ $<

# fnbtx (tests/integ/func-unwind.sh): fnbt's C++ twin, patchable, its symbols for backtrace_symbols
$(BUILD)/tests/integ/fnbtx-patch: tests/integ/fnbtx.cc
	@mkdir -p $(@D)
	$(CXX) $(CXX_FLAGS) $(PATCH_FLAGS) -fno-ipa-icf -rdynamic -o $@ $<

# The C++ programs of the tests (exceptions through traced frames), with the C++ compiler;
# funcprog-cxx has C frames too (tests/data/fnframes.c: no exit hooks when unwound).
CXX_FLAGS := -std=gnu++17 -Iinclude -Wall -Wextra -Wno-unused-parameter $(WERROR) $(CFLAGS)
$(BUILD)/tests/integ/%: tests/integ/%.cc $(LIBSO)
	@mkdir -p $(@D)
	$(CXX) $(CXX_FLAGS) -finstrument-functions -Itests -o $@ $< $(LINK_RIP)

$(BUILD)/tests/fnframes.o: tests/data/fnframes.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fno-exceptions -finstrument-functions -c $< -o $@

$(BUILD)/tests/integ/funcprog-cxx: tests/integ/funcprog-cxx.cc $(BUILD)/tests/fnframes.o $(LIBSO)
	@mkdir -p $(@D)
	$(CXX) $(CXX_FLAGS) -finstrument-functions -Itests -o $@ $< $(BUILD)/tests/fnframes.o \
		$(LINK_RIP)

# ... and with patchable entries (and gcc's nops: its C frames too)
$(BUILD)/tests/fnframes-patch.o: tests/data/fnframes.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fno-exceptions $(PATCH_FLAGS) $(NO_ICF) -c $< -o $@

$(BUILD)/tests/integ/funcprog-cxx-patch: tests/integ/funcprog-cxx.cc $(BUILD)/tests/fnframes-patch.o \
		$(LIBSO)
	@mkdir -p $(@D)
	$(CXX) $(CXX_FLAGS) $(PATCH_FLAGS) -fno-ipa-icf -Itests -o $@ $< \
		$(BUILD)/tests/fnframes-patch.o $(LINK_RIP)

# rip run --track's program (tests/integ/track-*.sh) uses libsqlite3 (libsqlite3-dev: mk/deps.sh)
$(BUILD)/tests/integ/trackprog: LINK_RIP += -lsqlite3 -ldl

# tests/integ/secure-exec.sh runs a copy set-user-ID, where the loader ignores $ORIGIN
$(BUILD)/tests/integ/secure_prog: LINK_RIP += -Wl,-rpath,$(abspath $(BUILD)) -ldl

$(BUILD)/bench/%: bench/%.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LINK_RIP)

# The function-tracing benchmark (bench/funcs.c), built the ways it compares: librip's hooks,
# empty hooks of its own, floor hooks (rdtsc and a store), nops at each entry.  Without frame
# pointers, as distributions build programs: the hooks then find a function's return address
# by their scan, not by the frame pointer's shortcut.
FUNCS_CFLAGS = $(ALL_CFLAGS) -fomit-frame-pointer
$(BUILD)/bench/funcs: bench/funcs.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -o $@ $< $(LINK_RIP)

$(BUILD)/bench/funcs-instr: bench/funcs.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -finstrument-functions -o $@ $< $(LINK_RIP)

# The same with librip.a linked in: librip's hooks called as the empty and floor hooks below
# are, with no PLT between (the budgets' comparisons, like with like).
$(BUILD)/bench/funcs-instr-a: bench/funcs.c $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -finstrument-functions -o $@ $< $(LIBA) -pthread -ldl

$(BUILD)/bench/funcs-empty: bench/funcs.c bench/funcs-hooks.c
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -DBENCH_HOOKS=1 -c bench/funcs-hooks.c -o $@-hooks.o
	$(CC) $(FUNCS_CFLAGS) -finstrument-functions -o $@ $< $@-hooks.o -pthread

# The same empty hooks in a shared library of their own: the compiler's hook calls as they
# reach any library's hooks (librip's, uftrace's libmcount), through the PLT.
$(BUILD)/bench/libfuncs-hooks.so: bench/funcs-hooks.c
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -DBENCH_HOOKS=1 -fPIC -shared -o $@ $<

$(BUILD)/bench/funcs-emptyso: bench/funcs.c $(BUILD)/bench/libfuncs-hooks.so
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -finstrument-functions -o $@ $< -L$(BUILD)/bench -lfuncs-hooks \
		-Wl,-rpath,'$$ORIGIN' -pthread

$(BUILD)/bench/funcs-floor: bench/funcs.c bench/funcs-hooks.c
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -DBENCH_HOOKS=2 -c bench/funcs-hooks.c -o $@-hooks.o
	$(CC) $(FUNCS_CFLAGS) -finstrument-functions -o $@ $< $@-hooks.o -pthread

$(BUILD)/bench/funcs-patch: bench/funcs.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(FUNCS_CFLAGS) -fpatchable-function-entry=5 -o $@ $< $(LINK_RIP)

# bench/many.c with its threads and coroutines parked in traced calls, for rip ps --stacks.
$(BUILD)/bench/many-fn: bench/many.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -finstrument-functions -DBENCH_FN -o $@ $< $(LINK_RIP)

# The malloc benchmark as production binaries are built: without frame pointers.
$(BUILD)/bench/malloc-nofp: bench/malloc.c $(LIBSO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fomit-frame-pointer -DMALLOC_SHAPE_REAL -o $@ $< $(LINK_RIP)

# Issue 27's workload as a user builds it: no librip, -O1 -g, no frame pointers (bench/leakthreads.sh).
$(BUILD)/bench/leakthreads: bench/leakthreads.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(WERROR) -std=gnu11 -O1 -g -fomit-frame-pointer -pthread -o $@ $<

# The watcher of bench/leakthreads.sh (wall time, a process's own peak RSS, tmpfs): no librip.
$(BUILD)/bench/tracewatch: bench/tracewatch.c
	@mkdir -p $(@D)
	$(CC) $(BASE) $(WARN) $(WERROR) $(CFLAGS) -o $@ $<

$(BUILD)/librip.pc: mk/librip.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@

# The readers again, under AddressSanitizer and UBSan: the tests feed them hostile files.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# No forced inlining in the sanitizer builds (include/internal/hot.h): minutes of compile time.
SAN_INLINE := -DRIP_NO_FORCED_INLINE
ASAN_TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/asan/%.o)
ASAN_READ_OBJ := $(READ_SRC:%.c=$(BUILD)/asan/%.o)
ASAN_ANALYSIS_OBJ := $(ANALYSIS_SRC:%.c=$(BUILD)/asan/%.o)
ASAN_RECORD_OBJ := $(RECORD_SRC:%.c=$(BUILD)/asan/%.o)
$(BUILD)/asan/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) $(SAN_INLINE) $(DW_CFLAGS) $(TREE) -c $< -o $@

$(BUILD)/asan/libripread.a: $(ASAN_READ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/asan/libripanalysis.a: $(ASAN_ANALYSIS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/asan/libriprecord.a: $(ASAN_RECORD_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Linked as a fixed-address executable (-no-pie): as a PIE, the loader applied 193,000
# relocations to its 5 MB of data (the sanitizers' tables of globals) at every start, a fifth
# of the CPU of the runs the tests make of it by the thousand (0.20 s a run of rip ps under
# integ/corrupt, 0.155 s without); what it checks is the same, compiled the same.
$(BUILD)/asan/rip: $(ASAN_TOOL_OBJ) $(BUILD)/asan/libripanalysis.a $(BUILD)/asan/libriprecord.a \
		$(BUILD)/asan/libripread.a
	$(CC) $(ASAN_FLAGS) -no-pie -o $@ $(ASAN_TOOL_OBJ) $(BUILD)/asan/libripanalysis.a \
		$(BUILD)/asan/libriprecord.a $(BUILD)/asan/libripread.a $(DW_LIBS) -lm -ldl -pthread

# The concurrency unit tests again, under ThreadSanitizer, into $(BUILD)/tsan, with the library
# and the readers they link built with it too (linked statically); tests/run.sh runs them as
# tsan/NAME and fails them on any report.  All five run:
#   pool        the lock-free slot pool: threads attach and exit, slots are reused
#   concurrent  writer threads, threads that come and go, and a reader, all at once
#   fork        fork() while another thread lives; the child's file of its own
#   ev_signal   a signal handler that emits into the ring of the writer it interrupted
#   ev_modes    two writer threads and a slow consumer thread (block mode); a discard child
# What TSan cannot pair: a reader maps the ring file at an address of its own, so a store
# through the writer's mapping and a load through the reader's are two different addresses
# to it, as they are between two processes.  It sees everything else the threads share: the
# library's state, the slot pool's and the event rings' words as each side uses them, and the
# test's own variables.
TSAN_UNIT := pool concurrent fork ev_signal ev_modes
# (gcc warns that TSan does not model atomic_thread_fence; clang has no such warning)
TSAN_FLAGS = -fsanitize=thread $(if $(findstring clang,$(shell $(CC) --version)),,-Wno-tsan)
TSAN_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/tsan/%.o)
TSAN_READ_OBJ := $(READ_SRC:%.c=$(BUILD)/tsan/%.o)
TSAN_TESTS := $(TSAN_UNIT:%=$(BUILD)/tsan/tests/unit/%)

$(BUILD)/tsan/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/tsan/read/%.o: read/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) $(SAN_INLINE) $(DW_CFLAGS) $(TREE) -c $< -o $@

$(BUILD)/tsan/librip.a: $(TSAN_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tsan/libripread.a: $(TSAN_READ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tsan/tests/unit/%: tests/unit/%.c $(BUILD)/tsan/libripread.a $(BUILD)/tsan/librip.a | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) $(DW_CFLAGS) $(TREE) -Itests -o $@ $< \
		$(BUILD)/tsan/libripread.a $(BUILD)/tsan/librip.a $(DW_LIBS) -lm -ldl -pthread

# The libFuzzer harnesses of tests/fuzz/ (one per input kind), always built with clang: the
# readers, the passes and record/ (relayd's client) again with
# -fsanitize=fuzzer-no-link,address,undefined into
# $(BUILD)/fuzz, each harness linked with libFuzzer.  make check runs each briefly
# (tests/integ/fuzz.sh); make fuzz runs each for FUZZ_TIME seconds on a corpus kept in
# $(BUILD)/fuzz/corpus (tests/fuzz/run.sh).
FUZZ_TIME ?= 300
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_HARNESS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_BINS := $(FUZZ_HARNESS:%=$(BUILD)/fuzz/%)
FUZZ_READ_OBJ := $(READ_SRC:%.c=$(BUILD)/fuzz/%.o)
FUZZ_ANALYSIS_OBJ := $(ANALYSIS_SRC:%.c=$(BUILD)/fuzz/%.o)
FUZZ_RECORD_OBJ := $(RECORD_SRC:%.c=$(BUILD)/fuzz/%.o)
FUZZ_CFLAGS = $(BASE) $(WARN) $(WERROR) -O1 -g $(FUZZ_SAN) $(SAN_INLINE) $(DW_CFLAGS) $(TREE)

$(BUILD)/fuzz/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/libripread.a: $(FUZZ_READ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz/libripanalysis.a: $(FUZZ_ANALYSIS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz/libriprecord.a: $(FUZZ_RECORD_OBJ)
	@rm -f $@
	ar rcs $@ $^

# the part of tools/ the harnesses call: rip push's HTTP client
$(BUILD)/fuzz/fuzz-%: $(BUILD)/fuzz/tests/fuzz/fuzz-%.o $(BUILD)/fuzz/tests/fuzz/fuzz.o \
		$(BUILD)/fuzz/tools/http.o \
		$(BUILD)/fuzz/libripanalysis.a $(BUILD)/fuzz/libriprecord.a $(BUILD)/fuzz/libripread.a
	$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(DW_LIBS) -lm -ldl -pthread

# Every program of the tree: the library, the preload library, rip, the examples, the tests'
# programs and the benchmarks.
progs: all $(UNIT) $(INTEG) $(BENCHES)

tests: progs $(if $(TOOL_SRC),$(BUILD)/asan/rip) $(TSAN_TESTS) $(FUZZ_BINS)

# The tree built once more with clang, warnings as errors, into $(BUILD)/clang (make check
# builds it; the tests run on the default build).
clang: | deps
	+$(MAKE) --no-print-directory CC=$(CLANG) BUILD=$(BUILD)/clang WERROR=-Werror progs

# lib/ and the public headers once more for aarch64 (their __aarch64__ branches: rip/snap.h's
# RIP_HERE, internal/relax.h, the clock without a TSC), with Debian's cross compiler, warnings
# as errors, into $(BUILD)/aarch64: librip.so, librip.a, and the two programs of
# tests/integ/headers.sh that use every public macro, as C11 -pedantic, linked with it.
# Compiled only (nothing runs them); tests/integ/cross-aarch64.sh runs this in make check.
# librip-preload.so is not built: it is x86-64 only (syscalls aarch64 lacks, glibc's
# x86-64 symbol versions in preload/preload.map).
CROSS_AARCH64 ?= aarch64-linux-gnu-gcc
A64 := $(BUILD)/aarch64
cross-aarch64: | deps
	+$(MAKE) --no-print-directory CC=$(CROSS_AARCH64) BUILD=$(A64) WERROR=-Werror \
		$(A64)/librip.so $(A64)/librip.a $(A64)/headers-api $(A64)/headers-legacy

# (for cross-aarch64, which calls it with CC and BUILD set)
$(BUILD)/headers-%: tests/data/headers-%.c $(LIBSO)
	$(CC) -std=c11 -pedantic $(WARN) -Werror -O2 -Iinclude -o $@ $< -L$(BUILD) -lrip

deps:
	@sh mk/deps.sh $(DEPS_FOR)

# When make check started, in ns: tests/run.sh ends with the time it took, the build included.
CHECK_START := $(if $(filter check,$(MAKECMDGOALS)),$(shell date +%s%N))
# make check builds with one job per CPU when it was given no -j: CI runs a plain make check
# (.ci/run), and one file at a time the five builds took 13 of its 32 minutes on 2 CPUs.  The
# build is a make of its own, started once deps is done: a -j this file added to MAKEFLAGS would
# start the build beside mk/deps.sh, whose packages some rules use without waiting for it, and
# a -j given on the command line is seen in recipes only (GNU make 4.3).  Given -jN, make check
# shares those jobs with it (the jobserver).  WERROR is passed on: that make's goal is not check.
CHECK_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
check: | deps
	+@$(MAKE) --no-print-directory $(CHECK_JOBS) WERROR='$(WERROR)' tests clang
	@RIP_CHECK_START=$(CHECK_START) sh tests/run.sh

demo: all
	@sh examples/demo.sh

bench: tests | deps
	@sh bench/run.sh

# (the seeds come from the programs of progs)
fuzz: progs $(FUZZ_BINS) | deps
	@BUILD=$(BUILD) sh tests/fuzz/run.sh -t $(FUZZ_TIME) $(BUILD)/fuzz/corpus

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/rip \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(RIP) $(DESTDIR)$(BINDIR)/rip
	install -m 755 $(LIBSO).$(VERSION) $(DESTDIR)$(LIBDIR)/
	if [ -e $(PRELOAD) ]; then install -m 755 $(PRELOAD) $(DESTDIR)$(LIBDIR)/; fi
	if [ -e $(TRACK) ]; then install -m 755 $(TRACK) $(DESTDIR)$(LIBDIR)/; fi
	ln -sf librip.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf librip.so.$(VERSION) $(DESTDIR)$(LIBDIR)/librip.so
	install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	install -m 644 include/rip.h include/librip.h $(DESTDIR)$(INCDIR)/
	install -m 644 include/rip/abi.h include/rip/snap.h include/rip/resource.h \
		include/rip/proc.h include/rip/module.h $(DESTDIR)$(INCDIR)/rip/
	if [ -e $(PRELOAD) ]; then install -d $(DESTDIR)$(LIBDIR)/rip/modules && \
		for m in $(MODULES); do install -m 755 $$m $(DESTDIR)$(LIBDIR)/rip/modules/; done; fi
	sed -e "s|@PREFIX@|$(PREFIX)|" -e "s|@LIBDIR@|$(LIBDIR)|" -e "s|@INCDIR@|$(INCDIR)|" \
		-e "s|@VERSION@|$(VERSION)|" mk/librip.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/librip.pc
	for m in man/*.1; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man1/; done; true
	for m in man/*.3; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man3/; done; true
	for m in man/*.7; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man7/; done; true

clean:
	rm -rf $(BUILD)

.PHONY: all deps progs tests clang cross-aarch64 check demo bench fuzz install clean
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
