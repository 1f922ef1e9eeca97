# sim.mk - builds one lab program for the kit's SIMT simulator (sim/), to run on a machine without a GPU.
#
# The same programs as mk/lab.mk (whose rules and file lists it includes): the runner, the student's one file with the
# kit's runner files, and the pattern's device program, with three differences:
#   - nvcc embeds PTX for compute_$(SM) beside the sm_$(SM) cubin, SM=75 (the kit's floor, Turing) unless SM=NN is
#     given as for a GPU build (SM=80 for __reduce_add_sync or bf16 __hfma): the simulator runs the PTX and its
#     device reports that compute capability (sim/README.md, "The device"); the grader's static checks read the
#     cubin as usual; the fatbinary is left uncompressed (-Xfatbin -compress=false), so that no part of the
#     kit needs libzstd or the zstd program to read it;
#   - the device program links the simulator (build/sim/lib/libpplsim-device.a, sim/Makefile) instead of CUDA's
#     runtime (-cudart none): the lab's kernels and the kit's run on the CPU, in the device program's process;
#   - harness/cub_scan.cu is replaced by sim/cub_scan_sim.cu, a plain scan with the same function (CUB's kernels
#     only matter as a yardstick of speed, which a simulator does not measure).
#
# Set before including, or on the command line: KIT, PATTERN, LAB_SRC, as for lab.mk. Optional: BUILD (default
# build/sim), HARNESS_BUILD (default build/sim/harness/smNN in the kit, shared by every lab), SIM_BUILD (the
# libraries), SM (the compute capability to simulate, 75 unless given).
#
#   make -f mk/sim.mk KIT=$PWD PATTERN=reduce LAB_SRC=$PWD/labs/03-sequential/reduce.cu BUILD=build/sim/03
#   make -f mk/sim.mk ... harness     the kit's parts only: the harness objects, the checker, the simulator
#
# The top-level `make sim LAB=NN` builds and runs a lab this way (tools/student/sim.py); `python3 -m grader --simulator`
# grades on it. sim/README.md describes the simulator and its environment variables.

BUILD ?= build/sim
# mk/cuda.mk's SM, without its -arch=native: the simulator has no GPU to ask (grader/sim/sim_target.py: DEFAULT_SM)
SIM_SM := $(or $(SM),75)
HARNESS_BUILD ?= $(KIT)/build/sim/harness/sm$(SIM_SM)
SIM_BUILD ?= $(KIT)/build/sim/lib
SIM_DEVICE_LIB := $(SIM_BUILD)/libpplsim-device.a
include $(KIT)/mk/zstd.mk
DEVICE_BACKEND := $(SIM_DEVICE_LIB)
DEVICE_DEFS := -DPPL_DEVICE_SIMULATOR
DEVICE_LDLIBS := -Xlinker --wrap=__cudaRegisterFatBinary $(ZSTD_LIBS) -lm

include $(KIT)/mk/lab.mk

SIM_LIB := $(SIM_BUILD)/libpplsim.a
SIM_ARCH_FLAGS := -gencode arch=compute_$(SIM_SM),code=sm_$(SIM_SM) -gencode arch=compute_$(SIM_SM),code=compute_$(SIM_SM)
# PTX as plain text (nvcc 13 compresses it with zstd by default): the simulator then needs no libzstd, and the
# grader's static checks read it without the zstd program or cuobjdump.
NVCCFLAGS := $(filter-out $(ARCH_FLAGS),$(NVCCFLAGS)) $(SIM_ARCH_FLAGS) -cudart none -Xfatbin -compress=false
LAB_LDLIBS := -lm

# The device program is built for the simulator: the same sources, its kernels compiled for compute_$(SM) and linked
# with the simulator (build/sim/lib/libpplsim-device.a: the runtime and the core, with harness/device/runner_link.c
# and sim/backend_sim.c) instead of CUDA's runtime; the runner is a GPU build's, whose client runtime forwards its
# calls to whichever device program the checker starts beside it. The simulator's sizes are small
# (grader/sim/simulator.py SIM_MAX_N: 8 MiB of floats), so the runner and the device may each take 512 MiB of host
# memory (the checker's --host-memory-mib, RLIMIT_DATA; a GPU build keeps the default 8 GiB): the reference
# solutions of labs 05, 06 and 07 pass at 2^21 elements with 256 MiB.
LAUNCHER_ARGS := --host-memory-mib 512
# `harness` is everything of the kit's a lab program needs, the simulator included: grader/compile/build.py builds it before
# any student's file, so that a failure there is reported as the kit's, not as a student's link error.

# One build of the simulator's libraries at a time (flock): labs built at once (the test suite, a class's workers)
# share them, and two makes writing one archive left it truncated ("ar: error reading core_ptx_parse.o").
$(SIM_LIB) $(SIM_DEVICE_LIB): $(wildcard $(KIT)/sim/*.c $(KIT)/sim/*.h $(KIT)/sim/Makefile) \
		$(HARNESS)/device/runner_link.c $(HARNESS)/device/runner_link.h $(HARNESS)/device/backend.h
	mkdir -p $(SIM_BUILD) && flock $(SIM_BUILD)/.build.lock $(MAKE) -s -C $(KIT)/sim SIM_BUILD=$(abspath $(SIM_BUILD)) KIT=$(abspath $(KIT))

$(HARNESS_BUILD)/cub_scan.o: $(KIT)/sim/cub_scan_sim.cu $(HEADERS) | $(HARNESS_BUILD)
	$(NVCC) $(NVCCFLAGS) $(DEVICE_INCLUDES) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
