#!/usr/bin/env bash
# tools/setup.sh - installs what `make grade` or `make test` needs and this machine lacks. The Makefile runs it
# before both (targets setup-grade and setup-test), so that on a fresh Debian or Ubuntu machine with the CUDA
# toolkit those two commands are the whole set-up.
#
#     tools/setup.sh grade|test [--check]
#
# grade needs: the CUDA toolkit 12 or later (checked, never installed: it comes with the machine), a C and C++
#   compiler (build-essential), binutils (nm, objdump: the grader's static checks), bubblewrap and libseccomp-dev
#   (the runner's sandbox, harness/checker/sandbox.c), Python 3.11 or later and requirements.txt's pinned packages.
# test needs all of that, and Check and pkg-config (the C tests), pandoc (make handouts and its test), libzstd-dev
#   (the simulator reads nvcc 13's zstd-compressed PTX, sim/fatbin.c) and git (make dist and its tests).
#
# Debian and Ubuntu packages are installed with apt-get, as root or through `sudo -n` where that needs no password;
# otherwise it prints the one command to run and stops. The Python packages go into the Python that make runs,
# $PYTHON: where that is the kit's default and python3 lacks them, into a virtual environment, build/venv, which the
# Makefile then runs for every target (Debian 12's python3 refuses pip: "externally-managed-environment"). A PYTHON
# of your own gets `$PYTHON -m pip install -r requirements.txt`. Offline, point pip at downloaded wheels:
# PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR (made elsewhere by `pip download -r requirements.txt -d DIR`).
#
# Checking costs little: `command -v` and header tests every time; nvcc's version and the Python packages once,
# remembered in build/setup/TARGET.ok under a key of requirements.txt, this script, nvcc and the Python (delete the
# file, or `make clean`, to check them again).
#
# --check only reports what is missing and the command that would install it; it installs nothing.
# Exit status: 0 ready; 2 something is missing that this run did not install (the message says what to do).
set -euo pipefail

KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=$KIT/build/venv
STAMP_DIR=$KIT/build/setup
REQUIREMENTS=$KIT/requirements.txt

usage() { echo "usage: tools/setup.sh grade|test [--check]" >&2; exit 2; }
TARGET=${1:-}
[ "$TARGET" = grade ] || [ "$TARGET" = test ] || usage
CHECK_ONLY=
case "${2:-}" in "") ;; --check) CHECK_ONLY=1 ;; *) usage ;; esac

say() { echo "setup: $*" >&2; }

# The Python make runs (the Makefile's rule, for a run outside make): build/venv's once made, else python3.
DEFAULT_PYTHON=python3
[ -x "$VENV/bin/python3" ] && DEFAULT_PYTHON=$VENV/bin/python3
PY=${PYTHON:-$DEFAULT_PYTHON}
OWN_PYTHON=  # the kit's own choice, which this script may replace with build/venv's
if [ "$PY" = python3 ] || [ "$PY" = "$VENV/bin/python3" ]; then OWN_PYTHON=1; fi

# ---- Debian packages: what is missing, and why each is wanted ----
PACKAGES=() WHY=()
want() { PACKAGES+=("$1"); WHY+=("$1 ($2)"); }
has() { command -v "$1" >/dev/null 2>&1; }
joined() { local IFS=";"; echo "$*" | sed 's/;/; /g'; }

{ has cc && has g++; } || want build-essential "cc and g++: the harness, and nvcc's host compiler"
{ has nm && has objdump; } || want binutils "nm, objdump: the grader's static checks"
# PPL_BWRAP (harness/checker/sandbox.c) and SECCOMP_CFLAGS/SECCOMP_LIBS (mk/checker.mk) name copies of their own
has bwrap || { [ -n "${PPL_BWRAP:-}" ] && [ -x "$PPL_BWRAP" ]; } ||
    want bubblewrap "the sandbox the students' code runs in"
[ -e /usr/include/seccomp.h ] || [ -n "${SECCOMP_LIBS:-}" ] || want libseccomp-dev "the runner's seccomp filter"
if [ "$TARGET" = test ]; then
    { has pkg-config && [ -e /usr/include/check.h ]; } || want "check pkg-config" "the C unit tests"
    has pandoc || want pandoc "make handouts and its test"
    [ -e /usr/include/zstd.h ] || want libzstd-dev "the simulator reads nvcc 13's compressed PTX"
    has git || want git "make dist and its tests"
fi

# ---- what is checked once: nvcc, and the Python packages ----
NVCC_BIN=${NVCC:-nvcc}
key() {  # what the stamp remembers: change any of it and the slow checks run again
    { echo "$TARGET $PY $(command -v "$NVCC_BIN" || true)"; cat "$REQUIREMENTS" "${BASH_SOURCE[0]}"; } |
        sha256sum | cut -d' ' -f1
}
STAMP=$STAMP_DIR/$TARGET.ok
KEY=$(key)
CHECKED=
[ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$KEY" ] && CHECKED=1

FATAL=()
# As root, the runner's sandbox runs the students' code as nobody (harness/checker/sandbox.c), which must be able to
# reach the kit: a clone in /root (mode 700) fails every sandboxed run. The tests need the sandbox; grading falls back
# to fewer layers and says so in results.json.
if [ "$(id -u)" = 0 ]; then
    d=$KIT
    while [ "$d" != / ]; do
        mode=$(stat -c %a "$d")
        if [ $((8#$mode & 1)) = 0 ]; then
            shut="as root, the sandbox runs the students' code as nobody (uid 65534), who cannot enter $d (mode $mode):
       put the kit where anyone may enter (e.g. git clone $KIT /srv/kit), or chmod o+x $d"
            if [ "$TARGET" = test ]; then FATAL+=("$shut"); else say "warning: $shut"; fi
            break
        fi
        d=$(dirname "$d")
    done
fi
if [ -z "$CHECKED" ]; then
    if ! has "$NVCC_BIN"; then
        if [ -x /usr/local/cuda/bin/nvcc ]; then
            FATAL+=("nvcc is in /usr/local/cuda/bin, which is not on PATH: export PATH=/usr/local/cuda/bin:\$PATH")
        else
            FATAL+=("no nvcc: the kit needs the CUDA toolkit, 12 or later (https://developer.nvidia.com/cuda-downloads;
       Debian 12's nvidia-cuda-toolkit is 11.8, too old); put its bin/ on PATH, or name it with NVCC=PATH")
        fi
    else
        release=$("$NVCC_BIN" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p' | head -1)
        if [ -z "$release" ] || [ "$release" -lt 12 ]; then
            FATAL+=("$(command -v "$NVCC_BIN") is CUDA ${release:-of an unknown release}: the kit needs CUDA 12 or later")
        fi
    fi
fi

# Whether Python $1 has requirements.txt's pins: status 0 yes; 1 no, PY_LACKS naming those it lacks, one per line;
# 3 it cannot have them (too old, does not run, an unpinned line), PY_LACKS saying why.
python_state() {
    local status=0
    PY_LACKS=$("$1" - "$REQUIREMENTS" "$1" 2>&1 <<'EOF'
import sys
if sys.version_info < (3, 11):
    print("%s is Python %s: the kit needs 3.11 or later (its tomllib)" % (sys.argv[2], sys.version.split()[0]))
    sys.exit(11)
from importlib import metadata
lacking = []
for n, line in enumerate(open(sys.argv[1]), 1):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, sep, version = (s.strip() for s in line.partition("=="))
    if not sep or not name or not version:
        print(f"requirements.txt:{n}: {line!r} is not pinned as NAME==VERSION")
        sys.exit(11)
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        have = None
    if have != version:
        lacking.append(f"{name}=={version} (installed: {have or 'none'})")
print("\n".join(lacking))
sys.exit(10 if lacking else 0)
EOF
    ) || status=$?
    case $status in  # its own statuses, apart from a traceback's 1
    0) return 0 ;;
    10) return 1 ;;
    11) return 3 ;;
    *) PY_LACKS="$1 does not run (exit status $status): ${PY_LACKS:0:300}"; return 3 ;;
    esac
}

PY_LACKS=  # requirements the Python lacks, or "later" where python3 itself is still to be installed
if [ -z "$CHECKED" ]; then
    if ! has "$PY"; then
        if [ -n "$OWN_PYTHON" ]; then
            want "python3 python3-venv" "the grader and the tests; build/venv for requirements.txt"
            PY_LACKS=later
        else
            FATAL+=("PYTHON=$PY: no such program")
        fi
    else
        status=0
        python_state "$PY" || status=$?
        if [ $status = 3 ]; then FATAL+=("$PY_LACKS")
        elif [ $status = 1 ] && [ -n "$OWN_PYTHON" ] && [ ! -x "$VENV/bin/python3" ] &&
             ! "$PY" -c "import ensurepip, venv" 2>/dev/null; then
            want python3-venv "build/venv, for requirements.txt's packages"
        fi
    fi
fi

if [ ${#FATAL[@]} -gt 0 ]; then
    for f in "${FATAL[@]}"; do say "$f"; done
    [ ${#PACKAGES[@]} -eq 0 ] || say "it also lacks: $(joined "${WHY[@]}")"
    say "make $TARGET cannot run here until that is fixed"
    exit 2
fi

# ---- install the Debian packages ----
apt_line() {  # the command that installs PACKAGES, with $1 in front of each apt-get
    echo "${1}apt-get update && ${1}apt-get install -y --no-install-recommends ${PACKAGES[*]}"
}
python_plan() {  # how this script would install the Python packages
    if [ -n "$OWN_PYTHON" ]; then echo "make $TARGET installs requirements.txt's Python packages into build/venv"
    else echo "then: $PY -m pip install -r requirements.txt"; fi
}
if [ ${#PACKAGES[@]} -gt 0 ]; then
    say "make $TARGET needs, and this machine lacks: $(joined "${WHY[@]}")"
    if [ -n "$CHECK_ONLY" ]; then
        say "to install them: $(apt_line "sudo ")"
        [ -z "$PY_LACKS" ] || say "$(python_plan)"
        exit 2
    fi
    if [ "$(id -u)" = 0 ]; then SUDO=
    elif has sudo && sudo -n true 2>/dev/null; then SUDO="sudo -n "
    else
        say "this user may not install them (not root, and sudo asks for a password). Run:"
        echo "    $(apt_line "sudo ")"
        say "then make $TARGET again${PY_LACKS:+ ($(python_plan))}"
        exit 2
    fi
    say "$(apt_line "$SUDO")"
    export DEBIAN_FRONTEND=noninteractive
    { ${SUDO}apt-get update -qq && ${SUDO}apt-get install -y -qq --no-install-recommends ${PACKAGES[*]} >/dev/null; } ||
        { say "apt-get failed (its message is above): make $TARGET cannot go on"; exit 2; }
    if [ "$PY_LACKS" = later ]; then python_state "$PY" || [ $? = 1 ] || { say "$PY_LACKS"; exit 2; }; fi
fi

# ---- install the Python packages ----
if [ -n "$PY_LACKS" ]; then
    say "$PY lacks: $(echo "$PY_LACKS" | paste -sd, | sed 's/,/, /g')"
    if [ -n "$CHECK_ONLY" ]; then say "$(python_plan)"; exit 2; fi
    mkdir -p "$STAMP_DIR"
    exec 9>"$STAMP_DIR/lock"
    flock 9  # another make grade/test of this kit may be installing at the same time
    pip_failed() {
        say "pip could not install requirements.txt (its message is above). Without a network, download the wheels"
        say "where there is one (pip download -r requirements.txt -d DIR) and run make $TARGET PIP_NO_INDEX=1"
        say "PIP_FIND_LINKS=DIR; behind a proxy that re-signs TLS, give pip its CA: PIP_CERT=FILE"
        exit 2
    }
    PIP=(-m pip install --disable-pip-version-check --no-input -q -r "$REQUIREMENTS")
    if [ -z "$OWN_PYTHON" ]; then
        say "$PY -m pip install -r requirements.txt"
        "$PY" "${PIP[@]}" || { say "or install them in PYTHON=$PY some other way, or leave PYTHON unset"; pip_failed; }
    elif [ -x "$VENV/bin/python3" ]; then
        if (python_state "$VENV/bin/python3"); then :  # made meanwhile by another run
        else
            say "installing requirements.txt into build/venv"
            "$VENV/bin/python3" "${PIP[@]}" || pip_failed
        fi
    else
        # Made under another name and renamed when complete: an interrupted run leaves no half-made build/venv,
        # which the Makefile would otherwise take for the kit's Python.
        say "making build/venv (python3 -m venv) and installing requirements.txt into it"
        rm -rf "$VENV.partial"
        python3 -m venv "$VENV.partial"
        "$VENV.partial/bin/python3" "${PIP[@]}" || { rm -rf "$VENV.partial"; pip_failed; }
        mv -T "$VENV.partial" "$VENV"
        PY=$VENV/bin/python3
        say "make runs $PY from now on (\`make clean\` removes it)"
    fi
    python_state "$PY" || { say "still lacking after pip: $PY_LACKS"; exit 2; }
    KEY=$(key)
    STAMP=$STAMP_DIR/$TARGET.ok
fi

mkdir -p "$STAMP_DIR"
echo "$KEY" > "$STAMP"
