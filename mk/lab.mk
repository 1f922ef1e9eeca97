# lab.mk - builds one lab: the runner (the runner harness plus the student's one file), the kit's checker, and the
# lab program PATTERN_lab that runs the one through the other (docs/DESIGN.md, "Two programs").
#
# Set before including (a lab's Makefile does): KIT, the kit's root; PATTERN, the harness family (reduce), as
# grader/labs.toml names it for the lab. Optional: LAB_SRC, the student's file (default PATTERN.cu, every lab's file
# of that pattern: grader/patterns.py); BUILD, where the student's object and the program go (default build/);
# HARNESS_BUILD, where the harness objects go (default: one folder in the kit per GPU architecture, shared by
# every lab, so the harness compiles once); LAB_LDLIBS, libraries linked after everything (mk/sim.mk's simulator).
#
#   make            builds $(BUILD)/$(PATTERN)_runner and $(BUILD)/$(PATTERN)_lab (the launcher)
#   make run        builds it and checks the default sizes
#   make check      quick feedback on small and edge sizes, yours / expected (the kit's make check)
#   make sanitize   compute-sanitizer's findings (races, out-of-bounds accesses, barriers) with file:line
#   make profile    Nsight Compute metrics of this lab's kernels beside the previous stage's reference
#   make grade      grades this lab with the kit's grader
#   make sim        runs this lab on the kit's CPU simulator, no GPU needed (N=1,1025 sizes, ARGS='...' any run)
#   make bench      times this lab's kernel beside the reference solution and the baseline, and draws it on the ladder
#   make clean
#   make help       this list
#
# Without a GPU, run, check, sanitize and profile say what they would have done and give the simulator commands that
# come nearest (grader/run/no_gpu.py); the tools exit 77, "cannot run here", which make reports as "Error 77" before
# exiting 2 itself (make has no way to pass a recipe's status on).

BUILD ?= build
LAB_SRC ?= $(PATTERN).cu
include $(KIT)/mk/cuda.mk
include $(KIT)/mk/harness.mk
include $(KIT)/mk/checker.mk
.DEFAULT_GOAL := all

HARNESS_BUILD ?= $(KIT)/build/harness/$(ARCH_TAG)
PROGRAM := $(BUILD)/$(PATTERN)_lab
RUNNER := $(BUILD)/$(PATTERN)_runner
# The device program: kit code only, one per pattern and GPU architecture, shared by every lab of the pattern.
DEVICE := $(HARNESS_BUILD)/$(PATTERN)_device
DEVICE_OBJS := $(DEVICE_CU:%.cu=$(HARNESS_BUILD)/%.o) $(DEVICE_CU_PATTERN:%.cu=$(HARNESS_BUILD)/$(PATTERN)_%.o) \
               $(HARNESS_BUILD)/stats.o
# The device's backend: the GPU's (CUDA's runtime and driver) here; mk/sim.mk's is the simulator.
DEVICE_BACKEND ?= $(HARNESS_BUILD)/backend_gpu.o $(HARNESS_BUILD)/runner_link.o
DEVICE_LDLIBS ?=
DEVICE_DEFS ?=
RUNNER_OBJS := $(RUNNER_CXX:%.cpp=$(HARNESS_BUILD)/runner_%.o) $(HARNESS_BUILD)/runner_$(PATTERN)_runner.o \
               $(HARNESS_BUILD)/runner_$(PATTERN)_support.o
# The runner's CUDA runtime: calls forwarded to the device program (sim/device_client.c), the same for a GPU and the
# simulator.
SIM_BUILD ?= $(KIT)/build/sim/lib
CLIENT_LIB := $(SIM_BUILD)/libpplsim-client.a
CUDA_INCLUDE ?= $(abspath $(dir $(shell command -v $(NVCC) 2>/dev/null))../include)
HEADERS := $(wildcard $(HARNESS)/device/*.h $(HARNESS)/runner/*.h $(HARNESS)/common/*.h $(HARNESS)/include/*.h \
                      $(PATTERNS_DIR)/*/*.h $(PATTERNS_DIR)/*/include/*.h)
# The student's fatbinary is left uncompressed (nvcc 13 compresses it with zstd by default): the simulator's check
# reads the PTX of this very object without libzstd (grader/sim/sim_check.py), as mk/sim.mk's builds are read.
# (STUDENT_FATBIN_FLAGS= leaves nvcc's default: the static checks' test of a compressed image.)
STUDENT_FATBIN_FLAGS ?= -Xfatbin -compress=false
STUDENT_NVCCFLAGS = $(NVCCFLAGS) $(STUDENT_INCLUDES) $(STUDENT_FATBIN_FLAGS)

.PHONY: all harness run check sanitize profile grade sim clean student-flags help
all: $(PROGRAM)
harness: $(DEVICE) $(RUNNER_OBJS) $(CLIENT_LIB) $(CHECKER)

# The lab program: a launcher of the checker with this lab's runner and its pattern's device program, so that
# `PATTERN_lab ARGS` runs the lab. LAUNCHER_ARGS: more of the checker's options, as shell words. It finds its folder
# without a process of its own (no dirname, no $(...)): a grading starts it for every run.
LAUNCHER_ARGS ?=
$(PROGRAM): $(RUNNER) $(DEVICE) $(CHECKER)
	printf '#!/bin/sh\n# %s: runs this lab through the kit'"'"'s checker (ppl_checker --help for the options).\n# module.fatbin beside it (the grader writes it: grader/compile/build.py) is the only device code the runner may run.\ncase "$$0" in */*) here="$${0%%/*}" ;; *) here=. ;; esac\ncase "$$here" in /*) ;; *) here="$$PWD/$$here" ;; esac\nif [ -f "$$here/module.fatbin" ]; then set -- --module "$$here/module.fatbin" "$$@"; fi\nexec "%s" --pattern %s --runner "$$here/%s" --device "%s" %s "$$@"\n' \
	    "$(notdir $@)" "$(abspath $(CHECKER))" "$(PATTERN)" "$(notdir $(RUNNER))" "$(abspath $(DEVICE))" \
	    '$(LAUNCHER_ARGS)' > $@
	chmod +x $@

# The runner: the student's object, the kit's runner files and the client runtime, no CUDA runtime of its own.
$(RUNNER): $(BUILD)/student.o $(RUNNER_OBJS) $(CLIENT_LIB)
	$(NVCC) $(NVCCFLAGS) -cudart none -o $@ $^ $(LAB_LDLIBS)

# The student's file sees harness/include/ and its pattern's include/ alone.
$(BUILD)/student.o: $(LAB_SRC) $(wildcard $(HARNESS)/include/*.h $(PATTERNS_DIR)/$(PATTERN)/include/*.h) | $(BUILD)
	$(NVCC) $(STUDENT_NVCCFLAGS) -c -o $@ $<

# The command that compiles the student's file, without -c, -o and the file (grader/compile/build.py runs it sandboxed).
student-flags:
	@echo $(NVCC) $(STUDENT_NVCCFLAGS)

# The device program and the runner's objects are shared by every lab built at once (the test suite, a class's
# workers): each is written under a name of its own and renamed when complete, so no build links a half-written one.
$(DEVICE): $(DEVICE_OBJS) $(DEVICE_BACKEND)
	$(NVCC) $(NVCCFLAGS) -o $@.$$$$.tmp $^ $(DEVICE_LDLIBS) && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/%.o: $(HARNESS)/device/%.cu $(HEADERS) | $(HARNESS_BUILD)
	$(NVCC) $(NVCCFLAGS) $(DEVICE_DEFS) $(DEVICE_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/$(PATTERN)_%.o: $(PATTERNS_DIR)/$(PATTERN)/%.cu $(HEADERS) | $(HARNESS_BUILD)
	$(NVCC) $(NVCCFLAGS) $(DEVICE_DEFS) $(DEVICE_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/runner_link.o: $(HARNESS)/device/runner_link.c $(HEADERS) | $(HARNESS_BUILD)
	$(CC) $(CFLAGS) $(DEVICE_INCLUDES) -I$(CUDA_INCLUDE) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/%.o: $(HARNESS)/common/%.c $(HEADERS) | $(HARNESS_BUILD)
	$(CC) $(CFLAGS) $(DEVICE_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

# The runner's kit files: host code only, built by the host compiler against the CUDA headers.
RUNNER_CXXFLAGS = $(OPT_FLAGS) -std=c++17 -Wall -x c++ $(RUNNER_INCLUDES) -I$(CUDA_INCLUDE)
$(HARNESS_BUILD)/runner_%.o: $(HARNESS)/runner/%.cpp $(HEADERS) | $(HARNESS_BUILD)
	$(CXX) $(RUNNER_CXXFLAGS) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/runner_$(PATTERN)_%.o: $(PATTERNS_DIR)/$(PATTERN)/%.cpp $(HEADERS) | $(HARNESS_BUILD)
	$(CXX) $(RUNNER_CXXFLAGS) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/runner_$(PATTERN)_support.o: $(PATTERNS_DIR)/$(PATTERN)/support.cu $(HEADERS) | $(HARNESS_BUILD)
	$(CXX) $(RUNNER_CXXFLAGS) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

# One build of the client library at a time (flock), as mk/sim.mk's libraries.
$(CLIENT_LIB): $(KIT)/sim/device_client.c $(KIT)/sim/fatbin.h $(HARNESS)/common/device_protocol.h
	mkdir -p $(SIM_BUILD) && flock $(SIM_BUILD)/.build.lock $(MAKE) -s -C $(KIT)/sim SIM_BUILD=$(abspath $(SIM_BUILD)) \
	    KIT=$(abspath $(KIT)) $(abspath $(CLIENT_LIB))

$(BUILD) $(HARNESS_BUILD):
	mkdir -p $@

# The Python of the kit's tools: the top Makefile's rule (build/venv's, once tools/setup.sh made it).
PYTHON ?= $(shell if [ -x '$(KIT)/build/venv/bin/python3' ]; then echo '$(KIT)/build/venv/bin/python3'; else echo python3; fi)

# The README's commands in a lab's folder first install what they need and the machine lacks (tools/setup.sh grade,
# as make grade does; a moment once done), so that the first command typed on a fresh machine works: run builds the
# program afterwards, in a make of its own; the others are the top Makefile's targets, which run it themselves.
run:
	@$(KIT)/tools/setup.sh grade
	@$(MAKE) --no-print-directory $(PROGRAM)
	@echo ./$(PROGRAM); ./$(PROGRAM) || { status=$$?; if [ $$status -eq 77 ]; then \
	    PYTHONPATH=$(KIT) $(PYTHON) -m grader.run.no_gpu run --lab $(notdir $(CURDIR)) --here; fi; exit $$status; }

# The kit's tools, for this folder's file. PPL_LAB_FOLDER tells them the command was typed here, so the commands
# they suggest are this folder's (make sim, not make sim LAB=NN); --no-print-directory keeps make's "Entering
# directory" lines out of the output the tools read from make (grader/compile/build.py: make student-flags).
check sanitize profile grade sim:
	PPL_LAB_FOLDER=$(CURDIR) $(MAKE) --no-print-directory -C $(KIT) $@ LAB=$(notdir $(CURDIR)) \
	    SUBMISSION=$(abspath $(CURDIR)/..)

# Your kernel beside the reference and the baseline, on the ladder (tools/student/bench.py); SIZES=2^24,2^26 chooses the sizes.
.PHONY: bench
bench:
	PPL_LAB_FOLDER=$(CURDIR) $(MAKE) --no-print-directory -C $(KIT) bench LAB=$(notdir $(CURDIR)) \
	    SUBMISSION=$(abspath $(CURDIR)/..)

clean:
	rm -rf $(BUILD)

# The targets of a lab's folder: the "#   make" lines at the top of this file.
help:
	@echo "In a lab's folder ($(notdir $(CURDIR))), with your $(LAB_SRC):"
	@sed -n -e 's|\$$(BUILD)|$(BUILD)|g' -e 's|\$$(PATTERN)|$(PATTERN)|g' -e 's/^#   make/  make/p' $(KIT)/mk/lab.mk
