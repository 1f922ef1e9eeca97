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
# come nearest (grader/no_gpu.py); the tools exit 77, "cannot run here", which make reports as "Error 77" before
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
HARNESS_CU := $(RUNNER_CU) $(RUNNER_CU_$(PATTERN))
HARNESS_OBJS := $(HARNESS_CU:%.cu=$(HARNESS_BUILD)/%.o) $(HARNESS_BUILD)/stats.o
HEADERS := $(wildcard $(HARNESS)/runner/*.h $(HARNESS)/common/*.h $(HARNESS)/include/*.h)
STUDENT_NVCCFLAGS = $(NVCCFLAGS) $(STUDENT_INCLUDES)

.PHONY: all harness run check sanitize profile grade sim clean student-flags help
all: $(PROGRAM)
harness: $(HARNESS_OBJS) $(CHECKER)

# The lab program: a launcher of the checker with this lab's runner, so `PATTERN_lab ARGS` runs the lab.
# LAUNCHER_ARGS: more of the checker's options, as shell words (mk/sim.mk's --sim-device).
LAUNCHER_ARGS ?=
$(PROGRAM): $(RUNNER) $(CHECKER)
	printf '#!/bin/sh\n# %s: runs this lab through the kit'"'"'s checker (ppl_checker --help for the options).\nexec "%s" --pattern %s --runner "$$(cd "$$(dirname "$$0")" && pwd)/%s" %s "$$@"\n' \
	    "$(notdir $@)" "$(abspath $(CHECKER))" "$(PATTERN)" "$(notdir $(RUNNER))" '$(LAUNCHER_ARGS)' > $@
	chmod +x $@

$(RUNNER): $(BUILD)/student.o $(HARNESS_OBJS)
	$(NVCC) $(NVCCFLAGS) -o $@ $^ $(LAB_LDLIBS)

# The student's file sees harness/include/ alone.
$(BUILD)/student.o: $(LAB_SRC) $(wildcard $(HARNESS)/include/*.h) | $(BUILD)
	$(NVCC) $(STUDENT_NVCCFLAGS) -c -o $@ $<

# The command that compiles the student's file, without -c, -o and the file (grader/build.py runs it sandboxed).
student-flags:
	@echo $(NVCC) $(STUDENT_NVCCFLAGS)

# The harness objects are shared by every lab built at once (the test suite, a class's workers): each is written
# under a name of its own and renamed when complete, so no build links a half-written object.
$(HARNESS_BUILD)/%.o: $(HARNESS)/runner/%.cu $(HEADERS) | $(HARNESS_BUILD)
	$(NVCC) $(NVCCFLAGS) $(RUNNER_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(HARNESS_BUILD)/%.o: $(HARNESS)/common/%.c $(HEADERS) | $(HARNESS_BUILD)
	$(CC) $(CFLAGS) $(RUNNER_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

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
	    PYTHONPATH=$(KIT) $(PYTHON) -m grader.no_gpu run --lab $(notdir $(CURDIR)) --here; fi; exit $$status; }

# The kit's tools, for this folder's file. PPL_LAB_FOLDER tells them the command was typed here, so the commands
# they suggest are this folder's (make sim, not make sim LAB=NN); --no-print-directory keeps make's "Entering
# directory" lines out of the output the tools read from make (grader/build.py: make student-flags).
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
