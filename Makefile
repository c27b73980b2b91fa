# ccdiag: plain Makefile. `make` builds build/ccprobe; see README.md.
# Optional parts: USE_CUDA, USE_NCCL, USE_VERBS = auto | yes | no.

CC        = mpicc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -MMD -MP
CPPFLAGS += -D_GNU_SOURCE
LDLIBS   += -ljansson -lm -lpthread
PREFIX   ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
USE_CUDA ?= auto
USE_NCCL ?= auto
USE_VERBS ?= auto
B         = build

# --- optional features: auto compiles them in when found; yes insists ---
have_cuda  := $(if $(wildcard $(CUDA_HOME)/include/cuda_runtime.h),yes,no)
have_nccl  := $(if $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h),yes,no)
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
$(eval $(call feature,VERBS,verbs,libibverbs/librdmacm headers))
ifneq ($(have_cuda),yes)
have_nccl := no
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
ifeq ($(have_verbs),yes)
CPPFLAGS += -DHAVE_VERBS
LDLIBS   += -libverbs -lrdmacm
endif
FEATURES := features: mpi=yes cuda=$(have_cuda) nccl=$(have_nccl) verbs=$(have_verbs) gnuplot=$(have_gnuplot)

LIB_SRC  := $(wildcard core/*.c bench/*.c probes/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/obj/%.o)
# ccreport links no MPI, CUDA, NCCL or verbs: plain cc, jansson and inih only
RCC      ?= cc
RLDLIBS  := -ljansson -linih -lm
RPT_SRC  := $(filter-out report/main.c,$(wildcard report/*.c))
RPT_OBJ  := $(RPT_SRC:%.c=$(B)/robj/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/%)
FUZZ_SECONDS ?= 60

.PHONY: all check demo install clean deps features bench fuzz
all: features $(B)/ccprobe $(B)/ccreport

features:
	@echo "$(FEATURES)"

# rebuild everything when the feature set or the list of sources changes
STAMP := $(FEATURES) $(CPPFLAGS) $(sort $(LIB_SRC) $(RPT_SRC))
$(B)/features.txt: FORCE
	@mkdir -p $(B)
	@echo "$(STAMP)" | cmp -s - $@ || echo "$(STAMP)" > $@
FORCE:

$(B)/obj/%.o: %.c $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/libccprobe.a: $(LIB_OBJ) $(B)/features.txt
	rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(B)/ccprobe: $(B)/obj/ccprobe.o $(B)/libccprobe.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/robj/%.o: %.c $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -c -o $@ $<

$(B)/libccreport.a: $(RPT_OBJ) $(B)/features.txt
	rm -f $@ && ar rcs $@ $(RPT_OBJ)

$(B)/ccreport: $(B)/robj/report/main.o $(B)/libccreport.a
	$(RCC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(RLDLIBS)

# unit tests and fuzz targets named *_report_* test ccreport and link without MPI
$(B)/tests/test_report_%: tests/unit/test_report_%.c $(B)/libccreport.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< $(B)/libccreport.a -lcmocka $(RLDLIBS)

$(B)/tests/fuzz_report_%: tests/fuzz/fuzz_report_%.c tests/fuzz/driver.c $(B)/libccreport.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(RCC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(B)/libccreport.a $(RLDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libccprobe.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/libccprobe.a -lcmocka $(LDLIBS)

# fuzz targets under make check: the corpus plus seeded random inputs (tests/fuzz/driver.c)
$(B)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(B)/libccprobe.a $(B)/features.txt
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(B)/libccprobe.a $(LDLIBS)

# open-ended fuzzing with libFuzzer (clang, libclang-rt-14-dev), FUZZ_SECONDS per target
fuzz:
	@command -v clang >/dev/null && dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1 || \
		{ echo "make fuzz: needs clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev)"; exit 2; }
	@$(MAKE) --no-print-directory B=build-fuzz OMPI_CC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" build-fuzz/libccprobe.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
		OMPI_CC=clang $(CC) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
			-o build-fuzz/$$n $$f build-fuzz/libccprobe.a $(LDLIBS) || exit 1; \
		mkdir -p build-fuzz/corpus-$$n; \
		ASAN_OPTIONS=detect_leaks=0 build-fuzz/$$n -max_total_time=$(FUZZ_SECONDS) \
			build-fuzz/corpus-$$n tests/fuzz/corpus/$${n#fuzz_} || exit 1; done

deps:
	@scripts/deps.sh

check: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(FUZZ_BIN)
	@tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench: all
	@scripts/bench_allreduce.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/ccdiag/scripts \
		$(DESTDIR)$(PREFIX)/share/doc/ccdiag
	install -m 755 $(B)/ccprobe $(DESTDIR)$(PREFIX)/bin/ccprobe
	install -m 755 $(B)/ccreport $(DESTDIR)$(PREFIX)/bin/ccreport
	install -m 755 scripts/emucluster $(DESTDIR)$(PREFIX)/share/ccdiag/scripts/
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/ccdiag/

clean:
	rm -rf $(B)

-include $(LIB_OBJ:.o=.d) $(RPT_OBJ:.o=.d) $(B)/obj/ccprobe.d $(B)/robj/report/main.d

$(B)/bare_allreduce: tests/bench/bare_allreduce.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -o $@ $<
