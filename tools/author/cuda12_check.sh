#!/usr/bin/env bash
# cuda12_check.sh - the kit against a CUDA 12 toolkit, beside the CUDA 13 one this machine builds with. The
# developers' guide asks for both ("the kit must build with CUDA 12 and 13"); this checks 12 on a machine that has
# only 13 in /usr/local/cuda.
#
#   CUDA12_HOME=/usr/local/cuda-12.4 tools/author/cuda12_check.sh   check with that toolkit
#   tools/author/cuda12_check.sh --install                           first put CUDA 12.4 in .cache/cuda12 (git-ignored)
#                                                             unless CUDA12_HOME names one already
#
# The check, with CUDA12_HOME/bin/nvcc as NVCC and first on PATH, in a fresh copy of the kit (build/cuda12/kit: the
# kit's build folders are fixed and make does not rebuild objects another nvcc made, so a run in place would link
# CUDA 13's harness objects): the harness's Check tests and every lab and solution built (tests/run.py --only
# harness,build), the simulator's Check tests (make -C sim test-core, make -C tests/sim/runtime check: its runtime
# is compiled against CUDA 12's cudaDeviceProp), `make sim LAB=03 SUBMISSION=solutions`, and the solutions graded on
# the simulator (python3 -m grader --simulator: every test the simulator can run passes). It closes on
# `cuda12: N passed, M failed`. About 3 minutes on 2 cores.
#
# --install: PyPI's CUDA 12 wheels (nvidia-cuda-nvcc-cu12) hold ptxas and libNVVM but not nvcc, cicc, cudafe++,
# fatbinary or nvlink, so the toolkit comes from Debian's own CUDA 12.4 packages (trixie's non-free section:
# nvidia-cuda-toolkit 12.4.131, nvidia-cuda-dev 12.4.127 for the headers and libcudart_static.a, CCCL 2.3.2's
# libcu++-dev, libcub-dev and libthrust-dev), fetched with apt-get download through a private apt configuration in
# .cache/cuda12-apt (this system's sources, with their mirror, are left as they are) and unpacked, not installed, into
# CUDA_HOME's usual layout (bin/ with an nvcc.profile, nvvm/, include/, lib64/). About 1 GB to fetch, a minute.
# gcc 12 (Debian 12's) is the host compiler; CUDA 12.4 supports gcc 6 to 13.
#
# Exit status: 0 every check passed, 1 one failed, 77 skipped: no CUDA 12 toolkit (and none could be installed).
set -uo pipefail

KIT="$(cd "$(dirname "$0")/../.." && pwd)"
DEBIAN_SUITE=trixie  # the Debian release whose non-free section has CUDA 12.4
SKIP=77

install=0
for arg in "$@"; do
    case "$arg" in
        --install) install=1 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "cuda12_check.sh: unknown argument $arg (--install, --help)" >&2; exit 2 ;;
    esac
done

skip() { echo "cuda12: skipped: $*"; exit "$SKIP"; }

# The mirror this system's apt uses (deb822 .sources first, then one-line lists), so that no host is named here.
debian_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -e "$f" ] && awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' "$f"
    done | head -n1 | grep . && return
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\/.*debian\/?$/) { print $i; exit } }' |
        head -n1 | grep .
}

install_cuda12() {  # install_cuda12 DEST: DEST appears whole or not at all
    local final="$1" apt="$KIT/.cache/cuda12-apt" mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    local dest="$1.tmp" root="$1.unpack"
    { command -v apt-get && command -v dpkg-deb; } >/dev/null ||
        skip "--install needs apt-get and dpkg-deb (Debian or Ubuntu)"
    [ "$(dpkg --print-architecture)" = amd64 ] || skip "--install knows Debian's amd64 packages only"
    [ -r "$keyring" ] || skip "--install needs Debian's archive keyring ($keyring: debian-archive-keyring)"
    mirror="$(debian_mirror)" || skip "--install found no Debian mirror in /etc/apt/sources.list{,.d}"
    mkdir -p "$apt"/{etc/parts,lists/partial,cache,debs}
    echo "deb [signed-by=$keyring] $mirror $DEBIAN_SUITE main contrib non-free" >"$apt/etc/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=$apt/etc/parts"
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::State::status=/dev/null"
                -o "APT::Sandbox::User=root" -o "Acquire::Retries=2")
    echo "cuda12: fetching Debian $DEBIAN_SUITE's CUDA 12 packages into $apt/debs"
    apt-get "${opts[@]}" -qq update || skip "Debian's package archive is unreachable (apt-get update failed)"
    local pkgs=(nvidia-cuda-toolkit nvidia-cuda-dev libcu++-dev libcub-dev libthrust-dev) p
    for p in "${pkgs[@]}"; do
        ls "$apt/debs/${p}"_*.deb >/dev/null 2>&1 && continue
        (cd "$apt/debs" && apt-get "${opts[@]}" -qq download "$p") || skip "apt-get download $p failed"
    done
    echo "cuda12: unpacking into $final"
    rm -rf "$root" "$dest" && mkdir -p "$root"
    dpkg-deb --fsys-tarfile "$apt"/debs/nvidia-cuda-toolkit_*.deb |
        tar -x -C "$root" ./usr/bin ./usr/lib/nvidia-cuda-toolkit/bin ./usr/lib/nvidia-cuda-toolkit/libdevice ||
        return 1
    dpkg-deb --fsys-tarfile "$apt"/debs/nvidia-cuda-dev_*.deb |
        tar -x -C "$root" --wildcards './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart_static.a' \
            './usr/lib/x86_64-linux-gnu/libcudadevrt.a' './usr/lib/x86_64-linux-gnu/libculibos.a' || return 1
    for p in libcu++-dev libcub-dev libthrust-dev; do
        dpkg-deb -x "$apt/debs/${p}"_*.deb "$root" || return 1
    done
    # CUDA_HOME's layout: nvcc and its helpers in bin/ (Debian's /usr/bin/nvcc is a shell wrapper around the real one
    # in /usr/lib/nvidia-cuda-toolkit/bin), cicc and libdevice under nvvm/, headers in include/, libraries in lib64/.
    mkdir -p "$dest"/{bin/crt,nvvm/bin,nvvm/libdevice,lib64}
    local tk="$root/usr/lib/nvidia-cuda-toolkit"
    cp "$tk/bin/nvcc" "$tk/bin/crt/"*.stub "$dest/bin/" && mv "$dest/bin/"*.stub "$dest/bin/crt/"
    for p in bin2c cu++filt cudafe++ cuobjdump fatbinary nvdisasm nvlink nvprune ptxas; do
        cp "$root/usr/bin/$p" "$dest/bin/"
    done
    cp "$tk/bin/cicc" "$dest/nvvm/bin/" && cp "$tk/libdevice/"* "$dest/nvvm/libdevice/"
    mv "$root/usr/include" "$dest/include"
    mv "$root/usr/lib/x86_64-linux-gnu/"lib*.a "$dest/lib64/"
    # nvcc reads nvcc.profile beside itself: where its tools, libdevice, headers and libraries are.
    cat >"$dest/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
    rm -rf "$root"
    "$dest/bin/nvcc" --version | tail -n2 && rm -rf "$final" && mv "$dest" "$final"
}

CUDA12_HOME="${CUDA12_HOME:-}"
if [ -z "$CUDA12_HOME" ]; then
    CUDA12_HOME="$KIT/.cache/cuda12"
    if [ ! -x "$CUDA12_HOME/bin/nvcc" ]; then
        [ "$install" = 1 ] || skip "set CUDA12_HOME to a CUDA 12 toolkit, or pass --install to put one in .cache/cuda12"
        install_cuda12 "$CUDA12_HOME" || { echo "cuda12: installing CUDA 12 into $CUDA12_HOME failed" >&2; exit 1; }
    fi
fi
NVCC="$CUDA12_HOME/bin/nvcc"
[ -x "$NVCC" ] || skip "CUDA12_HOME=$CUDA12_HOME has no bin/nvcc"
release="$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')"
case "$release" in
    12.*) ;;
    *) echo "cuda12: $NVCC is CUDA ${release:-of no known release}, not 12" >&2; exit 1 ;;
esac
echo "cuda12: CUDA $release ($NVCC)"

# A fresh copy of the kit (no build folders), so that everything is built by this nvcc.
COPY="$KIT/build/cuda12/kit"
rm -rf "$COPY" && mkdir -p "$COPY"
tar -C "$KIT" --exclude=./.git --exclude=./.cache --exclude=build --exclude=__pycache__ -cf - . |
    tar -C "$COPY" -xf - ||
    { echo "cuda12: cannot copy the kit to $COPY" >&2; exit 1; }
export NVCC CUDA_HOME="$CUDA12_HOME" PATH="$CUDA12_HOME/bin:$PATH"
unset CUDA_PATH

passed=0 failed=0
step() {  # step NAME COMMAND...: run it in the copy, count it
    local name="$1"; shift
    echo "cuda12: == $name: $*"
    local rc=0
    (cd "$COPY" && "$@") || rc=$?
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1)); echo "cuda12: ok   $name"
    else
        failed=$((failed + 1)); echo "cuda12: FAIL $name (exit $rc)"
    fi
}
step "harness tests, labs and solutions build" python3 tests/run.py --only harness,build
step "simulator core tests" make -s -C sim test-core
step "simulator runtime tests" make -s -C tests/sim/runtime check
step "make sim LAB=03" make -s sim LAB=03 SUBMISSION=solutions
step "solutions graded on the simulator" python3 -m grader --simulator --submission solutions --quiet
echo "cuda12: $passed passed, $failed failed"
[ "$failed" = 0 ]
