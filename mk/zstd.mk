# zstd.mk - whether libzstd (libzstd-dev) is here, for the simulator's fatbinary reader (sim/fatbin.c): HAVE_ZSTD is
# yes or empty. Included by sim/Makefile and tests/sim/runtime/Makefile, the two builds that compile fatbin.c.
#
# Without it the simulator is built with PPL_SIM_NO_ZSTD: it reads plain PTX (mk/sim.mk asks nvcc for that, always)
# and LZ4-compressed PTX, and says what to install when handed zstd-compressed PTX (nvcc 13's default).
#
# The header is asked for with -include, not by piping an #include line to cc -E: in a $(shell) call, make 4.3
# passes '\#' through unchanged, so cc read a harmless stray-backslash line and the test said yes everywhere.

CC ?= cc
HAVE_ZSTD := $(shell $(CC) -E -x c -include zstd.h /dev/null >/dev/null 2>&1 && echo yes)
ZSTD_DEFS := $(if $(HAVE_ZSTD),,-DPPL_SIM_NO_ZSTD)
ZSTD_LIBS := $(if $(HAVE_ZSTD),-lzstd)
