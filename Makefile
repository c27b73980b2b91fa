# ccdiag: plain Makefile. `make` builds build/ccprobe; see README.md.
# Optional parts: USE_CUDA, USE_NCCL, USE_CUBLASLT, USE_VERBS = auto | yes | no.

CC        = mpicc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -MMD -MP
CPPFLAGS += -D_GNU_SOURCE
LDLIBS   += -ljansson -lm -lpthread
PREFIX   ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
USE_CUDA ?= auto
USE_NCCL ?= auto
USE_CUBLASLT ?= auto
USE_VERBS ?= auto
USE_OPENBLAS ?= auto
B         = build

# --- a fresh machine: the packages the build needs (scripts/deps.sh), checked
# once per make (not in sub-makes, not for clean/deps). As root they are
# installed; otherwise make stops with one line naming them.
ifeq ($(MAKELEVEL),0)
ifneq ($(filter-out clean deps,$(or $(MAKECMDGOALS),all)),)
BUILD_MISSING := $(strip $(shell scripts/deps.sh --missing-build) \
	$(if $(filter install man deb,$(MAKECMDGOALS)),$(shell scripts/deps.sh --missing-packaging)))
ifneq ($(BUILD_MISSING),)
ifeq ($(shell id -u),0)
$(info make: installing the packages the build needs: $(BUILD_MISSING) (scripts/deps.sh))
ifneq ($(shell scripts/deps.sh >&2 && echo ok),ok)
$(error scripts/deps.sh could not install $(BUILD_MISSING))
endif
else
$(error missing packages: $(BUILD_MISSING); run scripts/deps.sh as root (apt-get install -y $(BUILD_MISSING)))
endif
endif
endif
endif

# --- optional features: auto compiles them in when found; yes insists ---
have_cuda  := $(if $(wildcard $(CUDA_HOME)/include/cuda_runtime.h),yes,no)
have_nccl  := $(if $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h),yes,no)
have_cublaslt := $(if $(wildcard $(CUDA_HOME)/include/cublasLt.h),yes,no)
# OpenBLAS (libopenblas-dev): the host matmuls of the trainstep probe
have_openblas := $(if $(wildcard /usr/include/$(shell gcc -print-multiarch 2>/dev/null)/cblas-openblas.h /usr/include/openblas/cblas.h),yes,no)
have_verbs := $(if $(wildcard /usr/include/infiniband/verbs.h),$(if $(wildcard /usr/include/rdma/rdma_cma.h),yes,no),no)

define feature
ifeq ($$(USE_$(1)),yes)
ifneq ($$(have_$(2)),yes)
$$(error USE_$(1)=yes but $(3) was not found)
endif
endif
ifeq ($$(USE_$(1)),no)
have_$(2) := no
endif
endef
$(eval $(call feature,CUDA,cuda,CUDA runtime under CUDA_HOME=$(CUDA_HOME)))
$(eval $(call feature,NCCL,nccl,nccl.h))
$(eval $(call feature,CUBLASLT,cublaslt,cublasLt.h under CUDA_HOME=$(CUDA_HOME)))
$(eval $(call feature,VERBS,verbs,libibverbs/librdmacm headers))
$(eval $(call feature,OPENBLAS,openblas,OpenBLAS's cblas.h (libopenblas-dev)))
ifneq ($(have_cuda),yes)
have_nccl := no
have_cublaslt := no
endif
have_gnuplot := $(if $(shell command -v gnuplot 2>/dev/null),yes,no)
# NVML is loaded with dlopen at run time; its header, when the toolkit has it, types the calls
have_nvml_h := $(if $(wildcard $(CUDA_HOME)/include/nvml.h),$(have_cuda),no)

ifeq ($(have_cuda),yes)
CPPFLAGS += -DHAVE_CUDA -I$(CUDA_HOME)/include
LDLIBS   += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -ldl
endif
ifeq ($(have_nvml_h),yes)
CPPFLAGS += -DHAVE_NVML_H
endif
ifeq ($(have_nccl),yes)
CPPFLAGS += -DHAVE_NCCL
LDLIBS   += -lnccl
endif
ifeq ($(have_cublaslt),yes)
CPPFLAGS += -DHAVE_CUBLASLT
# not linked: the gemm probe opens libcublasLt.so.N when a GPU runs it (probes/gemm.c)
LDLIBS   += -ldl
endif
ifeq ($(have_verbs),yes)
CPPFLAGS += -DHAVE_VERBS
LDLIBS   += -libverbs -lrdmacm
endif
ifeq ($(have_openblas),yes)
CPPFLAGS += -DHAVE_OPENBLAS
# not linked: the trainstep probe opens libopenblas.so.0 when it runs (probes/trainstep.c)
LDLIBS   += -ldl
endif
FEATURES := features: mpi=yes cuda=$(have_cuda) nccl=$(have_nccl) cublaslt=$(have_cublaslt) verbs=$(have_verbs) openblas=$(have_openblas) gnuplot=$(have_gnuplot)

LIB_SRC  := $(wildcard core/*.c gpu/*.c bench/*.c probes/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/obj/%.o)
# ccreport links no MPI, CUDA, NCCL or verbs: plain cc, jansson, inih and sqlite3 only
RCC      ?= cc
RLDLIBS  := -ljansson -linih -lsqlite3 -lcrypto -lm
# report/ judges, render/ renders the documents it writes, fmt/ sits beneath both
# (README.md, Layout); core/size.c, core/stats.c, core/topology.c and core/dcgm_parse.c are
# plain C (no MPI): ccreport reads sizes, takes medians, reads topologies and dcgmi's JSON as ccprobe does
RPT_SRC  := $(filter-out report/main.c,$(wildcard report/*.c render/*.c fmt/*.c)) core/size.c core/stats.c \
	core/topology.c core/dcgm_parse.c core/version.c
RPT_OBJ  := $(RPT_SRC:%.c=$(B)/robj/%.o)
# ccdiag (diag/): plain C beside ccreport, whose profile reader it uses; no MPI, CUDA,
# NCCL or verbs. It asks ccprobe for the registry's plan entries (ccprobe --plan).
DIAG_SRC := $(filter-out diag/main.c,$(wildcard diag/*.c)) core/spawn.c
DIAG_OBJ := $(DIAG_SRC:%.c=$(B)/robj/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/%)
FUZZ_SECONDS ?= 60
# the test double of CUDA, NVML and NCCL (tests/fakes/fake.h): every tests/fakes/fake*.c
# goes into one library, LD_PRELOADed by the tests; fakecuda/ holds the NVML name
# dlopen looks for. Built only where CUDA is (it needs the runtime's headers).
FAKE_SRC := $(wildcard tests/fakes/fake*.c)
FAKE_LIB := $(if $(filter yes,$(have_cuda)),$(B)/tests/libfakecuda.so)

.PHONY: all test-bins check check-loaded demo install man deb clean deps features bench bench-net fuzz asan bench-report bench-compare bench-ccdiag bench-isolate bench-train docs-examples
all: features $(B)/ccprobe $(B)/ccreport $(B)/ccdiag

features:
	@echo "$(FEATURES)"

# rebuild everything when the feature set or the list of sources changes
STAMP := $(FEATURES) $(CPPFLAGS) $(sort $(LIB_SRC) $(RPT_SRC) $(DIAG_SRC))
$(B)/features.txt: FORCE
	@mkdir -p $(B)
	@echo "$(STAMP)" | cmp -s - $@ || echo "$(STAMP)" > $@
FORCE:

$(B)/obj/%.o: %.c $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(VERSION_INC) $(CFLAGS) -c -o $@ $<

# the git commit every tool prints and writes (core/version.c): scripts/version.sh on
# every make, the header rewritten only when the commit changes, so that only
# core/version.c is compiled again
$(B)/gen/ccdiag_commit.h: FORCE
	@mkdir -p $(dir $@)
	@l="#define CCDIAG_COMMIT \"$$(scripts/version.sh commit)\""; \
		[ "$$(cat $@ 2>/dev/null)" = "$$l" ] || echo "$$l" >$@
$(B)/obj/core/version.o $(B)/robj/core/version.o: $(B)/gen/ccdiag_commit.h
$(B)/obj/core/version.o $(B)/robj/core/version.o: VERSION_INC = -I$(B)/gen

$(B)/libccprobe.a: $(LIB_OBJ) $(B)/features.txt
	rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(B)/ccprobe: $(B)/obj/ccprobe.o $(B)/libccprobe.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/robj/%.o: %.c $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE -DCCDIAG_SHARE='"$(PREFIX)/share/ccdiag"' $(VERSION_INC) $(CFLAGS) -c -o $@ $<

$(B)/libccreport.a: $(RPT_OBJ) $(B)/features.txt
	rm -f $@ && ar rcs $@ $(RPT_OBJ)

$(B)/ccreport: $(B)/robj/report/main.o $(B)/libccreport.a
	$(RCC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(RLDLIBS)

# ccdiag runs beside ccprobe and ccreport (diag/main.c)
$(B)/libccdiag.a: $(DIAG_OBJ) $(B)/features.txt
	rm -f $@ && ar rcs $@ $(DIAG_OBJ)

$(B)/ccdiag: $(B)/robj/diag/main.o $(B)/libccdiag.a $(B)/libccreport.a
	$(RCC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(RLDLIBS)

# the synthetic results generator of ccreport's golden cases and benchmark
$(B)/tests/gen_results: tests/report/gen_results.c
	@mkdir -p $(dir $@)
	$(RCC) $(CFLAGS) -o $@ $<

$(B)/tests/libfakecuda.so: $(FAKE_SRC) tests/fakes/fake.h $(B)/features.txt
	@mkdir -p $(B)/tests/fakecuda
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $(FAKE_SRC) -ldl
	ln -sf ../libfakecuda.so $(B)/tests/fakecuda/libnvidia-ml.so.1

# unit tests named *_diag_* test ccdiag (diag/) and link without MPI
$(B)/tests/test_diag_%: tests/unit/test_diag_%.c $(B)/libccdiag.a $(B)/libccreport.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< $(B)/libccdiag.a $(B)/libccreport.a -lcmocka $(RLDLIBS)

# unit tests and fuzz targets named *_report_* test ccreport and link without MPI
$(B)/tests/test_report_%: tests/unit/test_report_%.c $(B)/libccreport.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< $(B)/libccreport.a -lcmocka $(RLDLIBS)

$(B)/tests/fuzz_report_%: tests/fuzz/fuzz_report_%.c tests/fuzz/driver.c $(B)/libccreport.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(B)/libccreport.a $(RLDLIBS)

# test_ib_verbs defines the CUDA driver's dmabuf export, which the probe finds in the process
$(B)/tests/test_ib_verbs: LDLIBS += -rdynamic

$(B)/tests/%: tests/unit/%.c $(B)/libccprobe.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/libccprobe.a -lcmocka $(LDLIBS)

# fuzz targets under make check: the corpus plus seeded random inputs (tests/fuzz/driver.c)
$(B)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(B)/libccprobe.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(B)/libccprobe.a $(LDLIBS)

# open-ended fuzzing with libFuzzer (clang, libclang-rt-14-dev), FUZZ_SECONDS per target;
# ccprobe's targets link libccprobe.a through mpicc, ccreport's libccreport.a with plain
# clang and no MPI. Crashing inputs land in build-fuzz/ (crash-*): keep them as regression
# fixtures in tests/fuzz/corpus/NAME.
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined
fuzz:
	@command -v clang >/dev/null && dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1 || \
		{ echo "make fuzz: needs clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev)"; exit 2; }
	@$(MAKE) --no-print-directory B=build-fuzz OMPI_CC=clang RCC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -MMD -MP" \
		build-fuzz/libccprobe.a build-fuzz/libccreport.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
		case $$n in \
		fuzz_report_*) clang -D_GNU_SOURCE $(FUZZ_FLAGS) -o build-fuzz/$$n $$f \
			build-fuzz/libccreport.a $(RLDLIBS) || exit 1 ;; \
		*) OMPI_CC=clang $(CC) $(CPPFLAGS) $(FUZZ_FLAGS) \
			-o build-fuzz/$$n $$f build-fuzz/libccprobe.a $(LDLIBS) || exit 1 ;; \
		esac; \
		mkdir -p build-fuzz/corpus-$$n; \
		(cd build-fuzz && ASAN_OPTIONS=detect_leaks=0 ./$$n -max_total_time=$(FUZZ_SECONDS) \
			corpus-$$n ../tests/fuzz/corpus/$${n#fuzz_}) || exit 1; done

# ccreport and its unit tests under AddressSanitizer and UndefinedBehaviorSanitizer (with
# float-cast-overflow, which -fsanitize=undefined leaves out: 1e300 cast to an integer):
# build-asan/ccreport runs the golden cases (tests/integration/test_report.sh)
asan:
	@$(MAKE) --no-print-directory B=build-asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -MMD -MP" \
		build-asan/ccreport $(patsubst $(B)/%,build-asan/%,$(filter $(B)/tests/test_report_% $(B)/tests/fuzz_report_%,$(TEST_BIN) $(FUZZ_BIN)))
	@fail=0; for t in build-asan/tests/test_report_*; do case $$t in *.d) continue ;; esac; \
		echo "=== $$t"; $$t >build-asan/$$(basename $$t).log 2>&1 || { fail=1; tail -20 build-asan/$$(basename $$t).log; }; done; \
	for t in build-asan/tests/fuzz_report_*; do case $$t in *.d) continue ;; esac; n=$$(basename $$t); \
		echo "=== $$t"; $$t -n 20000 -s 1 tests/fuzz/corpus/$${n#fuzz_}/* || fail=1; done; \
	echo "=== golden cases with build-asan/ccreport"; \
	CCREPORT=build-asan/ccreport bash tests/integration/test_report.sh >build-asan/test_report.log 2>&1 || fail=1; \
	grep -E '^FAIL|passed' build-asan/test_report.log; \
	[ $$fail -eq 0 ] && echo "asan: ccreport clean under ASan+UBSan" || { echo "asan: failures above"; exit 1; }

deps:
	@scripts/deps.sh

# what the suites need beyond `all`: make check builds it in the local lane, beside the
# emulated-cluster suites, which need only ccprobe, ccreport and ccdiag (tests/run.sh)
test-bins: $(TEST_BIN) $(FUZZ_BIN) $(B)/tests/gen_results $(B)/tests/bench_isolate $(FAKE_LIB)

check: deps
	@$(MAKE) --no-print-directory -j$$(nproc) all
	@CCDIAG_TEST_BUILD='$(MAKE) --no-print-directory -j$$(nproc) test-bins' tests/run.sh

# the netpair and report suites beside a busy loop per core (tests/run.sh, CCDIAG_TEST_HOG)
check-loaded: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(FUZZ_BIN) $(B)/tests/gen_results
	@CCDIAG_TEST_HOG=1 TESTS="netpair report" tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench: all
	@scripts/bench_allreduce.sh

# the emulated links as a fraction of their shaped rate (root): what the tests no longer assert
bench-net: all
	@scripts/bench_links.sh

# the estimate against measured training steps on 4 emulated hosts (root): two shapes, twice
bench-train: all
	@scripts/bench_train.sh

# ccdiag's plan model: the h100 plan at 2..1024 nodes; as root, estimate vs wall time
bench-ccdiag: all
	@scripts/bench_ccdiag.sh

# the examples the docs quote from commands, rewritten from those commands (test_docs checks them)
docs-examples: all
	@scripts/docs-examples

# the group-testing planner on simulated clusters (docs/isolation.md): tests and rounds
bench-isolate: $(B)/tests/bench_isolate
	@$(B)/tests/bench_isolate $(ISOLATE_TRIALS)

$(B)/tests/bench_isolate: tests/bench/bench_isolate.c tests/unit/isolate_sim.h probes/isolate_plan.c probes/isolate_plan.h probes/schedule.c probes/schedule.h
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE -std=gnu11 $(CFLAGS) -Wall -Wextra -o $@ tests/bench/bench_isolate.c probes/isolate_plan.c probes/schedule.c -lm

bench-report: $(B)/ccreport $(B)/tests/gen_results
	@scripts/bench_report.sh

bench-compare: $(B)/ccreport $(B)/tests/gen_results
	@scripts/bench_compare.sh

# the man pages: help2man on each tool's --help (scripts/mkman.sh), so that --help
# stays the one source; MAN_x is the page's NAME line, MAN_SUBS_x the subcommands
# whose own --help becomes a section
MANS := $(B)/man/ccprobe.1 $(B)/man/ccreport.1 $(B)/man/ccdiag.1
MAN_ccprobe := run collective benchmarks and probes of a GPU cluster under MPI
MAN_ccreport := judge ccprobe results against an acceptance profile and write the report
MAN_ccdiag := plan, run and judge the acceptance test of a GPU cluster
MAN_SUBS_ccreport := compare history import
man: $(MANS)
$(B)/man/%.1: $(B)/% scripts/mkman.sh
	@mkdir -p $(dir $@)
	scripts/mkman.sh $@ $< "$(MAN_$*)" $(MAN_SUBS_$*)

# binaries in bin/; profiles, emucluster (ccdiag --emulated), the Slurm batch template
# and the PyTorch step (docs/estimate.md) in share/ccdiag/, which ccreport and ccdiag
# find from where they run (BIN/../share/ccdiag); docs; man pages
SHARE = $(DESTDIR)$(PREFIX)/share
install: all man
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(SHARE)/ccdiag/scripts" "$(SHARE)/ccdiag/profiles" \
		"$(SHARE)/ccdiag/workloads" "$(SHARE)/doc/ccdiag" "$(SHARE)/man/man1"
	install -m 755 $(B)/ccprobe $(B)/ccreport $(B)/ccdiag "$(DESTDIR)$(PREFIX)/bin/"
	install -m 755 scripts/emucluster scripts/ccdiag.sbatch "$(SHARE)/ccdiag/scripts/"
	install -m 644 profiles/*.ini "$(SHARE)/ccdiag/profiles/"
	install -m 755 workloads/torch_step.py "$(SHARE)/ccdiag/workloads/"
	install -m 644 README.md docs/*.md "$(SHARE)/doc/ccdiag/"
	install -m 644 $(MANS) "$(SHARE)/man/man1/"

# a Debian package of the binaries as built, B/ccdiag_VERSION_ARCH.deb: `make install
# PREFIX=/usr` into B/deb, then scripts/mkdeb.sh (Depends from dpkg-shlibdeps)
deb: all man
	@rm -rf $(B)/deb
	@$(MAKE) --no-print-directory install DESTDIR="$(abspath $(B))/deb/debian/ccdiag" PREFIX=/usr >/dev/null
	@CCDIAG_FEATURES='$(FEATURES)' scripts/mkdeb.sh $(B)

clean:
	rm -rf $(B) build-asan build-fuzz build-nocuda build-lean

-include $(LIB_OBJ:.o=.d) $(RPT_OBJ:.o=.d) $(DIAG_OBJ:.o=.d) $(B)/robj/diag/main.d $(B)/obj/ccprobe.d $(B)/robj/report/main.d

$(B)/bare_allreduce: tests/bench/bare_allreduce.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -o $@ $<
