# Parallel Patterns Lab - the kit's top-level targets. `make help` lists them.

KIT := $(CURDIR)
PYTHON ?= python3
SUBMISSION ?= labs
LAB ?=
RESULTS ?= build/grade/results.json
DIST ?= build/dist/parallel-patterns-lab.tar.gz
GRADESCOPE_ZIP ?= build/gradescope/autograder.zip

include mk/cuda.mk

LAB_DIRS := $(sort $(wildcard solutions/[0-9][0-9]-*))

.PHONY: help grade check profile test test-harness test-grader test-build test-drift test-gpu bench skeletons datasets figures handouts dist gradescope clean

help:
	@echo "make grade [SUBMISSION=labs|solutions|DIR] [LAB=03]   grade a submission (needs an NVIDIA GPU)"
	@echo "make check LAB=03 [SUBMISSION=labs|solutions|DIR]    quick check of one lab on small and edge sizes (GPU)"
	@echo "make profile LAB=03 [SUBMISSION=...] [SIZE=2^24]     Nsight Compute metrics, yours beside the previous stage's"
	@echo "make test                                            every test; GPU tests skip without a GPU"
	@echo "make bench                                           reference ladder vs CUB and copy bandwidth"
	@echo "make skeletons                                       rederive labs/ from solutions/"
	@echo "make datasets                                        regenerate the committed small datasets"
	@echo "make figures [LADDER=build/bench/ladder.md]          redraw the handouts' SVG figures (tools/figures.py)"
	@echo "make handouts [PDF=no]                               render the handouts to build/handouts/ (needs pandoc)"
	@echo "make dist [DIST=FILE.tar.gz]                         the student release, without solutions/ (build/dist/)"
	@echo "make gradescope [SM=75] [LAB=03]                     the Gradescope autograder zip (build/gradescope/)"
	@echo "Build for another GPU with SM=NN (e.g. SM=90); the default is the GPU in this machine."

grade:
	$(PYTHON) grader/grade.py --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB)) --results $(RESULTS)

check:
	$(PYTHON) tools/check.py --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB))

profile:
	$(PYTHON) tools/profile.py --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB)) $(if $(SIZE),--n $(SIZE))

test:
	$(PYTHON) tests/run.py

test-harness test-build test-drift:
	$(PYTHON) tests/run.py --only $(@:test-%=%)

test-grader:
	$(PYTHON) -m unittest discover -s tests/grader -t .

test-gpu:
	$(PYTHON) -m unittest discover -s tests/gpu -t .

bench:
	$(PYTHON) tools/bench.py $(if $(LAB),--lab $(LAB)) $(if $(SIZES),--sizes $(SIZES))

skeletons:
	$(PYTHON) tools/make_skeletons.py

datasets:
	$(MAKE) -C tools datasets

figures:
	$(PYTHON) tools/figures.py $(if $(LADDER),--ladder $(LADDER) --save-data handouts/figures/ladder.json)

handouts:
	$(PYTHON) tools/render_handouts.py $(if $(HANDOUTS_OUT),--out $(HANDOUTS_OUT)) $(if $(filter no,$(PDF)),--no-pdf)

dist:
	$(PYTHON) tools/dist.py release --out $(DIST)

gradescope:
	$(PYTHON) tools/dist.py gradescope --out $(GRADESCOPE_ZIP) $(if $(SM),--sm $(SM)) $(if $(LAB),--lab $(LAB))

clean:
	rm -rf build $(foreach d,$(LAB_DIRS) $(LAB_DIRS:solutions/%=labs/%),$(d)/build)
