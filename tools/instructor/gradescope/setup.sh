#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder's image (Ubuntu 22.04 by
# default).
#
# It installs what the grader needs: Python 3.11 or later (grader/ reads labs.toml with tomllib), make, a C compiler,
# libseccomp-dev (the checker program, build/harness/checker/ppl_checker, links libseccomp for the runner's seccomp
# filter), bubblewrap (the checker starts each runner, the program holding the student's code, under it:
# namespaces, a read-only view, no network; without it the sandbox has fewer layers and says so in the results) and
# PyYAML (grader/intake/metadata.py reads the submission's metadata, for late work).
#
# And the CUDA toolkit's compiler, which the labs need on every runner: on a runner with an NVIDIA GPU they are
# built and run on it; on Gradescope's default runners, which have none, they are built for the kit's simulator
# (sim/), which grades correctness and the hazard checks at once while performance waits for the course's GPU (the
# kit's README.md, "Gradescope"). When the image has no nvcc, it comes from NVIDIA's package repository for this
# Ubuntu: cuda-nvcc, cuda-cudart-dev, cuda-cccl (CUB), cuda-cuobjdump and cuda-sanitizer (compute-sanitizer, for a
# GPU runner) of version CUDA in autograder.env (make gradescope CUDA=12-8). A GPU runner needs its driver too.
#
# Then it compiles once what every submission shares (the simulator's library and harness and, with SM set in
# autograder.env, the harness for that GPU), so that each submission compiles only the student's file.
#
# Exit status: 0 ready; 1 the image cannot grade (no CUDA toolkit, or the kit's shared parts do not build: the
# message says which), so that Gradescope's image build fails where it can be seen, not every submission after it.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
SM="" LAB="" CUDA="12-8"
[ -f autograder.env ] && . ./autograder.env  # SM, LAB and CUDA, from make gradescope
export SM LAB

apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 make build-essential ca-certificates curl libseccomp-dev \
    bubblewrap python3-yaml

PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    # Ubuntu 22.04's python3 is 3.10; its universe has python3.11 (and python3-yaml works for it: pure Python).
    apt-get install -y -qq --no-install-recommends python3.11
    PYTHON=python3.11
fi

# NVIDIA's repository for this Ubuntu and machine (https://developer.download.nvidia.com/compute/cuda/repos/).
install_cuda() {
    local os arch
    . /etc/os-release
    os="${ID}${VERSION_ID//./}"
    case "$(uname -m)" in x86_64) arch=x86_64 ;; aarch64) arch=sbsa ;; *) arch="$(uname -m)" ;; esac
    local url="https://developer.download.nvidia.com/compute/cuda/repos/$os/$arch/cuda-keyring_1.1-1_all.deb"
    echo "setup.sh: installing CUDA $CUDA from $url"
    curl -fsSL -o /tmp/cuda-keyring.deb "$url" && dpkg -i /tmp/cuda-keyring.deb && apt-get update -qq &&
        apt-get install -y -qq --no-install-recommends "cuda-nvcc-$CUDA" "cuda-cudart-dev-$CUDA" "cuda-cccl-$CUDA" \
            "cuda-cuobjdump-$CUDA" "cuda-sanitizer-$CUDA"
}

export PATH="$PATH:/usr/local/cuda/bin"
CUDA_BIN=""
if ! command -v "${NVCC:-nvcc}" >/dev/null; then
    if install_cuda; then
        CUDA_BIN="/usr/local/cuda-${CUDA/-/.}/bin"
        export PATH="$CUDA_BIN:$PATH"
    fi
fi
printf 'PYTHON=%s\nCUDA_BIN=%s\n' "$PYTHON" "$CUDA_BIN" > setup.env

# Both failures below fail the image's build (Gradescope shows this output), rather than leave an image on which
# every submission scores 0 for the kit's sake.
if ! command -v "${NVCC:-nvcc}" >/dev/null; then
    echo "setup.sh: FAILED: no nvcc: CUDA $CUDA could not be installed from NVIDIA's repository (its messages are" >&2
    echo "setup.sh: above). Every lab needs the CUDA toolkit's compiler, on the simulator too. Choose another base" >&2
    echo "setup.sh: image (Ubuntu 22.04) or CUDA version (make gradescope CUDA=12-8), or one with the toolkit." >&2
    exit 1
fi
if ! "$PYTHON" -m grader.gradescope --prebuild; then
    echo "setup.sh: FAILED: the kit's shared parts do not build on this image (the messages above say what it" >&2
    echo "setup.sh: lacks); every submission would fail for the kit's sake." >&2
    exit 1
fi
