# harness.mk - the harness's sources, the one place every build reads them from (mk/lab.mk, mk/checker.mk,
# mk/sim.mk, tests/harness/Makefile, tools/author/Makefile).
#
#   harness/include/  what every student's file may include (with its pattern's include/, its only include path)
#   harness/checker/  the checker program: plain C, never links student code (mk/checker.mk)
#   harness/device/   the device program of each pattern: kit code only, it holds the GPU (or the simulator), the
#                     inputs, the outputs, the yardsticks and the timing (mk/lab.mk)
#   harness/runner/   the runner's few kit files, linked with the student's one file (mk/lab.mk): it has no GPU
#   harness/common/   the wire formats (protocol.h, device_protocol.h) and what the programs share
#   patterns/NAME/    one pattern's side of each program and its descriptor, pattern.toml (grader/patterns.py)

HARNESS := $(KIT)/harness
# The kit's patterns: each folder of patterns/ with a pattern.toml (docs/AUTHORING.md, "A new pattern"), whose files
# go by their roles: check.c (the checker's side), serve.cu and any other .cu (the device program's), runner.cpp
# (the runner's call of the lab's function), support.cu (size helpers, the runner's and the device program's) and
# include/ (what the pattern's lab files may include besides harness/include/).
PATTERNS_DIR := $(KIT)/patterns
PATTERNS := $(patsubst $(PATTERNS_DIR)/%/pattern.toml,%,$(wildcard $(PATTERNS_DIR)/*/pattern.toml))

# The checker, one program for every pattern (each pattern's check.c registers itself: checker/pattern.h).
# checker/sandbox.c needs libseccomp.
CHECKER_SRCS := main.c link.c sandbox.c bench.c cli.c dataset.c reference.c results.c rng.c checksum.c check_i32.c
CHECKER_PATTERN_SRCS := $(PATTERNS:%=$(PATTERNS_DIR)/%/check.c)
COMMON_SRCS := stats.c
CHECKER_INCLUDES := -I$(HARNESS)/checker -I$(HARNESS)/common -I$(HARNESS)/include

# The device program of one pattern: the shared main, link to the runner and timing, and the pattern's .cu files
# (its serving, yardsticks and size helpers). Every pattern's include/ is on its path: cub_scan.cu, the kit's scan,
# serves the scan's yardstick and the compaction's kit_exclusive_scan.
DEVICE_CU := main.cu device.cu bench.cu check_i32.cu cub_scan.cu
DEVICE_CU_PATTERN = $(notdir $(wildcard $(PATTERNS_DIR)/$(PATTERN)/*.cu))
DEVICE_INCLUDES = -I$(HARNESS)/device -I$(HARNESS)/common -I$(HARNESS)/include -I$(PATTERNS_DIR)/$(PATTERN) \
                  $(PATTERNS:%=-I$(PATTERNS_DIR)/%/include)
# The runner of one pattern, besides the student's file: its main and the pattern's runner.cpp and support.cu, built
# by the host compiler (no device code but the student's), and the client runtime (sim/device_client.c).
RUNNER_CXX := main.cpp
RUNNER_INCLUDES = -I$(HARNESS)/runner -I$(HARNESS)/common -I$(HARNESS)/include -I$(PATTERNS_DIR)/$(PATTERN)/include
# What the student's file sees: harness/include/ and its pattern's include/.
STUDENT_INCLUDES = -I$(HARNESS)/include -I$(PATTERNS_DIR)/$(PATTERN)/include

# libseccomp, static where the archive is there (the checker then runs on machines without the library).
PKG_CONFIG ?= pkg-config
SECCOMP_LIBS ?= $(or $(firstword $(wildcard /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/libseccomp.a)),\
                     $(shell $(PKG_CONFIG) --libs libseccomp 2>/dev/null),-lseccomp)
SECCOMP_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags libseccomp 2>/dev/null)
