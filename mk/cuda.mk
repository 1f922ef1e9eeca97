# cuda.mk - the compiler and the GPU architecture, shared by every lab, the tests and the benchmarks.
#
# By default the kit builds for the GPU in this machine (-arch=native); on a machine without one (CI) it builds
# for sm_75, the oldest GPU the kit supports (Turing: T4). Override with SM, e.g. `make SM=90` for an H100 or
# `make SM=80` for an A100. Every target carries its PTX beside the machine code (-arch=sm_NN does; the -gencode
# forms name it): the simulator's check of a GPU grading runs the PTX of the very object the GPU runs
# (grader/sim/sim_check.py), so that no #if __CUDA_ARCH__ can tell the two apart.

NVCC ?= nvcc
CC ?= cc

ifdef SM
  ARCH_FLAGS := -gencode arch=compute_$(SM),code=sm_$(SM) -gencode arch=compute_$(SM),code=compute_$(SM)
  ARCH_TAG := sm$(SM)
else
  HAVE_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
  ARCH_FLAGS := $(if $(HAVE_GPU),-arch=native,-gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75)
  ARCH_TAG := $(if $(HAVE_GPU),native,sm75)
endif

OPT_FLAGS ?= -O3
NVCCFLAGS := $(OPT_FLAGS) -lineinfo -std=c++17 $(ARCH_FLAGS) -Xcompiler -Wall $(EXTRA_NVCCFLAGS)
CFLAGS := $(OPT_FLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra $(EXTRA_CFLAGS)
