# harness.mk - the harness's sources, the one place every build reads them from (mk/lab.mk, mk/checker.mk,
# mk/sim.mk, tests/harness/Makefile, tools/author/Makefile).
#
#   harness/include/  what a student's file may include (its only include path)
#   harness/checker/  the checker program: plain C, never links student code (mk/checker.mk)
#   harness/device/   the device program of each pattern: kit code only, it holds the GPU (or the simulator), the
#                     inputs, the outputs, the yardsticks and the timing (mk/lab.mk)
#   harness/runner/   the runner's few kit files, linked with the student's one file (mk/lab.mk): it has no GPU
#   harness/common/   the wire formats (protocol.h, device_protocol.h) and what the programs share

HARNESS := $(KIT)/harness

# The checker, one program for every pattern (checker/main.c's table). checker/sandbox.c needs libseccomp.
CHECKER_SRCS := main.c link.c sandbox.c bench.c reduce.c scan.c compact.c cli.c dataset.c reference.c results.c \
                rng.c checksum.c check_i32.c
COMMON_SRCS := stats.c
CHECKER_INCLUDES := -I$(HARNESS)/checker -I$(HARNESS)/common -I$(HARNESS)/include

# The device program of one pattern: the shared main, link to the runner and timing, the pattern's own serving and
# yardsticks, and its size helpers (harness/common/PATTERN_support.cu, which the runner shares).
DEVICE_CU := main.cu device.cu bench.cu check_i32.cu cub_scan.cu student_calls.cu
DEVICE_CU_reduce := reduce_serve.cu reduce_baseline.cu
DEVICE_CU_scan := scan_serve.cu
DEVICE_CU_compact := compact_serve.cu compact_baseline.cu
DEVICE_INCLUDES := -I$(HARNESS)/device -I$(HARNESS)/common -I$(HARNESS)/include
# The runner of one pattern, besides the student's file: its main and the pattern's calls, built by the host
# compiler (no device code but the student's), and the client runtime (sim/device_client.c).
RUNNER_CXX := main.cpp
RUNNER_INCLUDES := -I$(HARNESS)/runner -I$(HARNESS)/common -I$(HARNESS)/include
STUDENT_INCLUDES := -I$(HARNESS)/include

# libseccomp, static where the archive is there (the checker then runs on machines without the library).
PKG_CONFIG ?= pkg-config
SECCOMP_LIBS ?= $(or $(firstword $(wildcard /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/libseccomp.a)),\
                     $(shell $(PKG_CONFIG) --libs libseccomp 2>/dev/null),-lseccomp)
SECCOMP_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags libseccomp 2>/dev/null)
