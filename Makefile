# Parallel Patterns Lab - the kit's top-level targets. `make help` lists them: the `## ` line above each rule is its
# help line (a test checks every target has one).

KIT := $(CURDIR)
# The Python of every target: build/venv's where tools/setup.sh made one (python3 lacked requirements.txt's packages
# and may not take pip's, as on Debian 12), else python3. Looked up when used, since make grade and make test may make
# it on the way; exported, so that the tests and the makes under them (in copies of the kit too) run the same one.
PYTHON ?= $(shell if [ -x '$(KIT)/build/venv/bin/python3' ]; then echo '$(KIT)/build/venv/bin/python3'; else echo python3; fi)
export PYTHON
SUBMISSION ?= labs
LAB ?=
RESULTS ?= build/grade/results.json
DIST ?= build/dist/parallel-patterns-lab.tar.gz
GRADESCOPE_ZIP ?= build/gradescope/autograder.zip

include mk/cuda.mk

LAB_DIRS := $(sort $(wildcard solutions/[0-9][0-9]-*))

.PHONY: help setup-grade setup-test grade sim sim-compare check sanitize profile test test-all test-harness test-grader test-classroom test-build test-student test-instructor test-author test-drift test-sim test-gpu test-attacks bench bench-grader regrade-bench new-lab skeletons datasets figures handouts dist gradescope grade-class grade-class-slurm rescore similarity class-uploads calibrate clean

## Build for another GPU with SM=NN (e.g. SM=90); the default is the GPU in this machine. The targets:
## make help                                           this list (the `## ` line above each rule of this Makefile)
help:
	@sed -n 's/^## //p' $(firstword $(MAKEFILE_LIST))

## make setup-grade, make setup-test                    install what make grade or make test needs, or say how (tools/setup.sh)
setup-grade setup-test:
	@tools/setup.sh $(@:setup-%=%)

## make grade [SUBMISSION=labs|solutions|DIR] [LAB=03]   grade a submission (needs an NVIDIA GPU)
## make grade SIM=1 [SUBMISSION=...] [LAB=03]           grade correctness on the CPU simulator (no GPU)
##     make sim and make grade SIM=1 end with a speed estimate on a GPU from the counts (GPU=H100, H200, A100 or T4;
##     not a measurement); on a GPU each lab is also checked on the simulator (NO_SIM_CHECK=1: the GPU alone)
grade: setup-grade
	$(DIE_WITH_MAKE) $(PYTHON) -m grader --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB)) $(if $(SIM),--simulator) $(if $(NO_SIM_CHECK),--no-simulator-check) --results $(RESULTS) $(if $(and $(SIM),$(filter command line,$(origin GPU))),--gpu $(GPU))

## make sim LAB=03 [SUBMISSION=...] [N=1,1025] [ARGS='--n 33 --seed 5']  one lab on the CPU simulator, no GPU: counts per line
##     [SCHEDULE=random:1234] blocks and warps in another order a GPU may choose (sim/README.md)
sim: setup-grade
	$(PYTHON) -m tools.student.sim --submission $(SUBMISSION) --lab $(or $(LAB),$(error make sim needs LAB=NN, e.g. make sim LAB=03)) $(if $(N),--n $(N)) $(if $(filter command line,$(origin ARGS)),--args "$(ARGS)") $(if $(filter command line,$(origin GPU)),--gpu $(GPU)) $(if $(SCHEDULE),--schedule $(SCHEDULE))

## make sim-compare [LAB=01,03] [N=2^20] [JSON=F] [MARKDOWN=F]  the simulator's counts beside Nsight Compute's, per solution
sim-compare:
	$(PYTHON) -m tools.author.sim_compare $(if $(or $(LAB),$(LABS)),--labs $(or $(LAB),$(LABS))) $(if $(N),--n $(N)) $(if $(JSON),--json $(JSON)) $(if $(MARKDOWN),--markdown $(MARKDOWN))

## make check LAB=03 [SUBMISSION=labs|solutions|DIR]    quick check of one lab on small and edge sizes (GPU)
check: setup-grade
	$(PYTHON) -m tools.student.check --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB))

## make sanitize LAB=04 [SUBMISSION=...] [TOOLS=racecheck] [N=5000]  compute-sanitizer: races, out-of-bounds, barriers, with file:line (GPU)
sanitize: setup-grade
	$(DIE_WITH_MAKE) $(PYTHON) -m grader.sanitize --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB)) $(if $(TOOLS),--tools $(TOOLS)) $(if $(N),--n $(N))

## make profile LAB=03 [SUBMISSION=...] [SIZE=2^24]     Nsight Compute metrics, yours beside the previous stage's
profile: setup-grade
	$(PYTHON) -m tools.student.nsight --submission $(SUBMISSION) $(if $(LAB),--lab $(LAB)) $(if $(SIZE),--n $(SIZE))

## make test                                            every component, the slow tests left out (about 10 minutes on 2 cores); GPU tests skip without a GPU
test: setup-test
	$(PYTHON) tests/run.py

## make test-all                                        every test: the slow ones too, the attack suite, the fresh roots (what CI runs)
test-all: setup-test
	$(PYTHON) tests/run.py --all

## make test-harness                                    the C harness's Check tests (tests/harness)
## make test-grader                                     the grader's tests, one submission (tests/grader)
## make test-classroom                                  grading a whole class (tests/grader/classroom)
## make test-build                                      every solution and skeleton compiles (nvcc)
## make test-student                                    make check, profile, bench and tools/setup.sh (tests/tools/student)
## make test-instructor                                 make dist, gradescope, calibrate, class-uploads, regrade-bench (tests/tools/instructor)
## make test-author                                     skeletons, handouts, figures, sim-compare (tests/tools/author)
## make test-drift                                      the same as make test-author (its former name)
## make test-sim                                        the CPU simulator (Check tests and tests/sim; needs nvcc)
## make test-gpu                                        end-to-end grading on a GPU (tests/gpu)
## make test-attacks                                    hostile submissions, each graded in a copy of the kit (tests/attacks)
## make test-fresh                                      README's commands on fresh Debian 12 roots (tests/fresh; slow, root, network)
test-harness test-grader test-classroom test-build test-student test-instructor test-author test-drift test-sim test-gpu test-attacks test-fresh:
	$(PYTHON) tests/run.py --only $(@:test-%=%)

## make bench LAB=03 [SUBMISSION=...] [SIZES=2^24,2^26]  your kernel beside the reference and the baseline, on the ladder (SVG)
## make bench                                           reference ladder vs CUB and copy bandwidth
bench: setup-grade
	$(PYTHON) -m tools.student.bench $(if $(LAB),--lab $(LAB) --submission $(SUBMISSION)) $(if $(SIZES),--sizes $(SIZES))

## make bench-grader [LAB=03,05] [SUBMISSION=solutions]  where a grading's time goes per lab, x the floor measured in the same run (GPU)
bench-grader:
	$(PYTHON) -m tools.instructor.bench_grader $(if $(LAB),--lab $(LAB)) $(if $(filter command line,$(origin SUBMISSION)),--submission $(SUBMISSION))

## make regrade-bench [REGRADES=5] [LAB=03] [NEAR=03,04]  grade the solutions and near-threshold kernels K times: score flips
regrade-bench:
	$(PYTHON) -m tools.instructor.regrade_bench $(if $(REGRADES),--regrades $(REGRADES)) $(if $(LAB),--lab $(LAB)) $(if $(NEAR),--near $(NEAR)) $(if $(TARGETS),--targets $(TARGETS))

# The grader ends, with every program it runs, when make does, even killed with SIGKILL (grader/run/lifetime.py): the
# recipe's shell names make's pid ($$PPID) in PPL_DIE_WITH.
DIE_WITH_MAKE = PPL_DIE_WITH=$$PPID

# A whole class (python3 -m grader.classroom --help). OUT counts only from the command line: one in the environment is not
# meant as the class's folder.
CLASS_OUT = $(if $(filter command line,$(origin OUT)),$(OUT),build/class)
CLASS_OPTS = $(if $(LAB),--lab $(LAB)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) $(if $(STATIC_ONLY),--static-only) $(if $(SIM),--simulator) \
	$(if $(STRIP_PREFIX),--strip-prefix $(STRIP_PREFIX)) $(if $(FORCE),--force) $(if $(OVERRIDES),--overrides $(OVERRIDES)) \
	$(if $(CANVAS_ROSTER),--canvas-roster $(CANVAS_ROSTER)) $(if $(NO_SIMILARITY),--no-similarity) \
	$(if $(ALLOW_WEAKER_SANDBOX),--allow-weaker-sandbox) $(if $(NO_SIM_CHECK),--no-simulator-check)
NEED_SUBMISSIONS = $(error make $@ needs SUBMISSIONS=DIR: a folder with one folder or archive per student)

## make grade-class SUBMISSIONS=DIR [LAB=03] [JOBS=N] [OUT=DIR]  grade a class: OUT/gradebook.csv (default build/class)
##     and OUT/report.html, similarity.html, canvas.csv; [ONLY=id,id] [FORCE=1] regrade, [OVERRIDES=FILE.csv|none]
##     [CANVAS_ROSTER=export.csv], [SIM=1] on the CPU simulator. make exits 2 on any failure: its "Error N" is the
##     grader's status (README)
grade-class: setup-grade
	$(DIE_WITH_MAKE) $(PYTHON) -m grader.classroom grade $(or $(SUBMISSIONS),$(NEED_SUBMISSIONS)) --out $(CLASS_OUT) $(CLASS_OPTS) $(if $(JOBS),--jobs $(JOBS)) $(if $(GPUS),--gpus $(GPUS)) $(if $(GRADERS_PER_GPU),--graders-per-gpu $(GRADERS_PER_GPU)) $(if $(ONLY),--only $(ONLY))

## make grade-class-slurm SUBMISSIONS=DIR [OUT=DIR] [SUBMIT=1] [GPU_TYPE=a100] [CONSTRAINT=...]  as a Slurm job array
grade-class-slurm:
	$(PYTHON) -m grader.classroom slurm $(or $(SUBMISSIONS),$(NEED_SUBMISSIONS)) --out $(CLASS_OUT) $(CLASS_OPTS) $(if $(PARTITION),--partition $(PARTITION)) $(if $(GPU_TYPE),--gpu-type $(GPU_TYPE)) $(if $(CONSTRAINT),--constraint '$(CONSTRAINT)') $(if $(SUBMIT),--submit)

## make rescore [OUT=DIR]                              score a graded class again under labs.toml as it is now, from
##     what its grading measured: nothing built or timed (grader/classroom/rescore.py)
rescore:
	$(PYTHON) -m grader.classroom rescore --out $(CLASS_OUT)

## make similarity [SUBMISSIONS=DIR] [LAB=03] [OUT=DIR]  shared code between students: OUT/similarity.html (without
##     SUBMISSIONS: the files make grade-class graded in OUT)
similarity:
	$(PYTHON) -m grader.classroom.similarity $(if $(SUBMISSIONS),$(SUBMISSIONS) --out $(CLASS_OUT),--graded $(CLASS_OUT)) $(if $(LAB),--lab $(LAB)) $(if $(STRIP_PREFIX),--strip-prefix $(STRIP_PREFIX))

## make class-uploads [STUDENTS=20] [LAB=03]            a synthetic class to grade (build/class-uploads)
class-uploads:
	$(PYTHON) -m tools.instructor.make_class --out build/class-uploads $(if $(STUDENTS),--students $(STUDENTS)) $(if $(or $(LAB),$(LABS)),--labs $(or $(LAB),$(LABS)))

## make calibrate [LAB=03,04] [DRY_RUN=1]              thresholds for this GPU model: grader/thresholds.d/GPU.toml
calibrate:
	$(PYTHON) -m tools.instructor.calibrate $(if $(or $(LAB),$(LABS)),--labs $(or $(LAB),$(LABS))) $(if $(REPEATS),--repeats $(REPEATS)) $(if $(DRY_RUN),--dry-run)

## make new-lab NAME=09-x LIKE=04|PATTERN=P [TITLE=...]  a new lab (like lab 04, or the first of pattern P): its files, then what is left (docs/AUTHORING.md)
new-lab: setup-grade
	$(PYTHON) -m tools.author.new_lab $(NAME) $(if $(PATTERN),--pattern $(PATTERN),--like $(LIKE)) $(if $(TITLE),--title "$(TITLE)")

## make skeletons [FORCE=1]                             rederive labs/ from solutions/ (FORCE=1: also edited files, copied to backups/ first)
skeletons:
	$(PYTHON) -m tools.author.make_skeletons $(if $(FORCE),--force)

## make datasets                                        regenerate the committed small datasets
datasets:
	$(MAKE) -C tools/author datasets

## make figures [LADDER=build/bench/ladder.md]          redraw the handouts' SVG figures (tools/author/figures.py)
figures:
	$(PYTHON) -m tools.author.figures $(if $(LADDER),--ladder $(LADDER) --save-data handouts/figures/ladder.json)

## make handouts [PDF=no]                               render the handouts to build/handouts/ (needs pandoc)
handouts:
	$(PYTHON) -m tools.author.render_handouts $(if $(HANDOUTS_OUT),--out $(HANDOUTS_OUT)) $(if $(filter no,$(PDF)),--no-pdf)

## make dist [DIST=FILE.tar.gz]                         the student release, without solutions/ (build/dist/)
dist:
	$(PYTHON) -m tools.instructor.dist release --out $(DIST)

## make gradescope [SM=75] [LAB=03] [CUDA=12-8]         the Gradescope autograder zip (build/gradescope/)
##     [CLASS=OUT]: it answers the submissions make grade-class graded in OUT with the course GPU's results
gradescope:
	$(PYTHON) -m tools.instructor.dist gradescope --out $(GRADESCOPE_ZIP) $(if $(SM),--sm $(SM)) $(if $(LAB),--lab $(LAB)) $(if $(filter command line,$(origin CUDA)),--cuda $(CUDA)) $(if $(CLASS),--class $(CLASS))

## make clean                                           remove build/ and the labs' build folders
clean:
	rm -rf build $(foreach d,$(LAB_DIRS) $(LAB_DIRS:solutions/%=labs/%),$(d)/build)
