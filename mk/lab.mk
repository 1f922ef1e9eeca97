# lab.mk - builds one lab: the trusted harness plus the student's one file.
#
# Set before including (a lab's Makefile does): KIT, the kit's root; PATTERN, the harness family (reduce);
# LAB_SRC, the student's file. Optional: BUILD, where the student's object and the program go (default build/);
# HARNESS_BUILD, where the harness objects go (default: one folder in the kit per GPU architecture, shared by
# every lab, so the harness compiles once); LAB_LDLIBS, libraries linked after everything (mk/sim.mk's simulator).
#
#   make            builds $(BUILD)/$(PATTERN)_lab
#   make run        builds it and checks the default sizes
#   make check      quick feedback on small and edge sizes, yours / expected (the kit's make check)
#   make sanitize   compute-sanitizer's findings (races, out-of-bounds accesses, barriers) with file:line
#   make profile    Nsight Compute metrics of this lab's kernels beside the previous stage's reference
#   make grade      grades this lab with the kit's grader
#   make clean

BUILD ?= build
HARNESS := $(KIT)/harness
include $(KIT)/mk/cuda.mk

HARNESS_BUILD ?= $(KIT)/build/harness/$(ARCH_TAG)
PROGRAM := $(BUILD)/$(PATTERN)_lab
HARNESS_CU := $(notdir $(wildcard $(HARNESS)/$(PATTERN)_*.cu)) lab_main.cu device.cu bench.cu check_i32.cu \
              cub_scan.cu
HARNESS_C := dataset.c rng.c reference.c stats.c results.c cli.c isolate.c checksum.c
HARNESS_OBJS := $(HARNESS_CU:%.cu=$(HARNESS_BUILD)/%.o) $(HARNESS_C:%.c=$(HARNESS_BUILD)/%.o)
OBJS := $(BUILD)/student.o $(HARNESS_OBJS)
HEADERS := $(wildcard $(HARNESS)/*.h)

.PHONY: all harness run check sanitize profile grade clean
all: $(PROGRAM)
harness: $(HARNESS_OBJS)

$(PROGRAM): $(OBJS)
	$(NVCC) $(NVCCFLAGS) -o $@ $^ -lgomp $(LAB_LDLIBS)

$(BUILD)/student.o: $(LAB_SRC) $(HEADERS) | $(BUILD)
	$(NVCC) $(NVCCFLAGS) -I$(HARNESS) -c -o $@ $<

$(HARNESS_BUILD)/%.o: $(HARNESS)/%.cu $(HEADERS) | $(HARNESS_BUILD)
	$(NVCC) $(NVCCFLAGS) -I$(HARNESS) -c -o $@ $<

$(HARNESS_BUILD)/%.o: $(HARNESS)/%.c $(HEADERS) | $(HARNESS_BUILD)
	$(CC) $(CFLAGS) -I$(HARNESS) -c -o $@ $<

$(BUILD) $(HARNESS_BUILD):
	mkdir -p $@

run: $(PROGRAM)
	./$(PROGRAM)

check sanitize profile grade:
	$(MAKE) -C $(KIT) $@ LAB=$(notdir $(CURDIR)) SUBMISSION=$(abspath $(CURDIR)/..)

clean:
	rm -rf $(BUILD)
