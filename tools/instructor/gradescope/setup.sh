#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder's image (Ubuntu).
#
# It installs what the grader needs besides CUDA: Python 3.11 or later (grader/ reads labs.toml with tomllib), make,
# a C compiler, libseccomp-dev (the checker program, build/harness/checker/ppl_checker, links libseccomp for the
# runner's seccomp filter) and bubblewrap (the checker starts each runner, the program holding the student's code,
# under it: namespaces, a read-only view, no network; without it the sandbox has fewer layers and says so in the
# results). It does NOT install the CUDA toolkit: nvcc 12 or 13 must come with the base image the course
# configures, and grading needs an NVIDIA GPU on the runner. Gradescope's default runners have no GPU: on them
# every run-time test reports "needs a GPU" and only compile errors are graded (see the kit's README.md, "Student
# release and Gradescope").
#
# With SM set in autograder.env (make gradescope SM=75), it also compiles the kit's harness (the checker and the
# runner's objects) once here, so that each submission compiles only the student's file.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
SM="" LAB=""
[ -f autograder.env ] && . ./autograder.env  # SM and LAB, from make gradescope
export SM LAB

apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 make build-essential ca-certificates libseccomp-dev bubblewrap

PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    # Ubuntu 22.04's python3 is 3.10; its universe has python3.11.
    apt-get install -y -qq --no-install-recommends python3.11
    PYTHON=python3.11
fi
echo "PYTHON=$PYTHON" > setup.env

export PATH="$PATH:/usr/local/cuda/bin"
if ! command -v "${NVCC:-nvcc}" >/dev/null; then
    echo "setup.sh: WARNING: no nvcc in this image. The CUDA toolkit (12 or 13) must come with the base image:" >&2
    echo "setup.sh: until it does, every submission's results say that the autograder has no CUDA toolkit." >&2
    exit 0
fi
"$PYTHON" -m grader.gradescope --prebuild ||
    echo "setup.sh: the harness did not prebuild; each run builds it" >&2
