# checker.mk - builds the checker program, build/harness/checker/ppl_checker: plain C with gcc, no CUDA, one
# program for every pattern; it never links student code (docs/DESIGN.md, "Two programs").
#
#   make -f mk/checker.mk KIT=$PWD            (mk/lab.mk builds it first for every lab)
#
# Needs libseccomp (Debian: libseccomp-dev) for the runner's sandbox (harness/checker/sandbox.c).

include $(KIT)/mk/harness.mk

CC ?= cc
CHECKER_BUILD ?= $(KIT)/build/harness/checker
CHECKER := $(CHECKER_BUILD)/ppl_checker
CHECKER_CFLAGS := -O2 -std=c11 -D_GNU_SOURCE -fopenmp -Wall -Wextra $(CHECKER_INCLUDES) $(SECCOMP_CFLAGS)
CHECKER_OBJS := $(CHECKER_SRCS:%.c=$(CHECKER_BUILD)/%.o) $(COMMON_SRCS:%.c=$(CHECKER_BUILD)/%.o) \
                $(PATTERNS:%=$(CHECKER_BUILD)/pattern_%.o)
CHECKER_HEADERS := $(wildcard $(HARNESS)/checker/*.h $(HARNESS)/common/*.h $(HARNESS)/include/exit_codes.h)

.PHONY: checker
checker: $(CHECKER)

# Several labs may build the checker at once (the grader builds each pattern's harness side by side, a class's
# workers): each file is written under a name of its own and renamed when complete, as mk/lab.mk's harness objects.
$(CHECKER): $(CHECKER_OBJS)
	$(CC) -fopenmp -o $@.$$$$.tmp $^ $(SECCOMP_LIBS) -lm && mv -f $@.$$$$.tmp $@

$(CHECKER_BUILD)/%.o: $(HARNESS)/checker/%.c $(CHECKER_HEADERS) | $(CHECKER_BUILD)
	$(CC) $(CHECKER_CFLAGS) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(CHECKER_BUILD)/%.o: $(HARNESS)/common/%.c $(CHECKER_HEADERS) | $(CHECKER_BUILD)
	$(CC) $(CHECKER_CFLAGS) -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

# A pattern's side of the checker (patterns/NAME/check.c), which registers itself in the checker's table.
$(CHECKER_BUILD)/pattern_%.o: $(PATTERNS_DIR)/%/check.c $(CHECKER_HEADERS) | $(CHECKER_BUILD)
	$(CC) $(CHECKER_CFLAGS) -I$(PATTERNS_DIR)/$* -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

$(CHECKER_BUILD):
	mkdir -p $@
