"""CUDA 12.4's compiler for the simulator's PTX table test (tests/sim/test_ptx_table.py): an nvcc of CUDA 12 when
one is installed, otherwise CUDA 12.4's NVRTC (the runtime compilation library: the same front end and NVVM as
12.4's nvcc, PTX out) from PyPI's wheels, which this module can fetch into .cache/cuda12-nvrtc (git-ignored, 28 MB).

    python3 -m tests.sim.ptx.cuda12 --install    fetch NVRTC 12.4 and the headers it needs (pip download)
    python3 -m tests.sim.ptx.cuda12              say which CUDA 12 compiler the test would use

Where a CUDA 12 compiler is looked for, first to last: $NVCC12 (an nvcc), $CUDA12_HOME/bin/nvcc,
.cache/cuda12/bin/nvcc (tools/author/cuda12_check.sh --install puts a whole toolkit there), .cache/cuda12-nvrtc.
PyPI's nvidia-cuda-nvcc-cu12 wheel has ptxas and libNVVM but no nvcc or front end, hence NVRTC.
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

KIT = Path(__file__).resolve().parents[3]
NVRTC_HOME = KIT / ".cache" / "cuda12-nvrtc"
# nvrtc: libnvrtc.so; cuda_runtime: cooperative_groups.h, cuda_fp16.h, cuda_bf16.h; cccl: <cuda/atomic>
WHEELS = ("nvidia-cuda-nvrtc-cu12==12.4.127", "nvidia-cuda-runtime-cu12==12.4.127",
          "nvidia-cuda-cccl-cu12==12.4.127")


class Compiler:
    """One CUDA 12 compiler: compile(source, arch, out) writes the PTX of source for compute_<arch>."""

    def __init__(self, kind, path):
        self.kind, self.path = kind, Path(path)
        self._lib = None

    def describe(self):
        return f"CUDA 12 {self.kind} ({self.path})"

    def compile(self, source, arch, out):
        """PTX of source (a .cu of kernels only) for compute_<arch>, with line info, into out; raises RuntimeError
        with the compiler's log when it fails."""
        if self.kind == "nvcc":
            proc = subprocess.run([str(self.path), "-ptx", f"-arch=compute_{arch}", "-lineinfo", "-O3",
                                   "-std=c++17", str(source), "-o", str(out)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if proc.returncode != 0:
                raise RuntimeError(proc.stdout)
            return
        lib = self._nvrtc()
        prog = ctypes.c_void_p()
        text = Path(source).read_bytes()
        check = self._check
        check(lib.nvrtcCreateProgram(ctypes.byref(prog), text, str(source).encode(), 0, None, None), "create")
        include = self.path / "nvidia"
        options = [f"--gpu-architecture=compute_{arch}", "-lineinfo", "-std=c++17", "--device-int128",
                   f"-I{include / 'cuda_runtime' / 'include'}", f"-I{include / 'cuda_cccl' / 'include'}"]
        array = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        status = lib.nvrtcCompileProgram(prog, len(options), array)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if status != 0:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))
            raise RuntimeError(f"NVRTC failed on {source} for compute_{arch}:\n{log.value.decode(errors='replace')}")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        Path(out).write_bytes(ptx.value)

    def _nvrtc(self):
        if self._lib is None:
            libdir = self.path / "nvidia" / "cuda_nvrtc" / "lib"
            for builtins in sorted(libdir.glob("libnvrtc-builtins.so*")):  # libnvrtc.so loads it by name
                ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            self._lib = ctypes.CDLL(str(libdir / "libnvrtc.so.12"))
        return self._lib

    @staticmethod
    def _check(status, what):
        if status != 0:
            raise RuntimeError(f"NVRTC {what} failed with status {status}")


def release_of(ptx_text):
    """The CUDA release a PTX file says made it ("12.4"), or None."""
    found = re.search(r"Cuda compilation tools, release (\d+\.\d+)", ptx_text)
    return found.group(1) if found else None


def find():
    """The CUDA 12 compiler to use, or None."""
    candidates = []
    if os.environ.get("NVCC12"):
        candidates.append(("nvcc", Path(os.environ["NVCC12"])))
    if os.environ.get("CUDA12_HOME"):
        candidates.append(("nvcc", Path(os.environ["CUDA12_HOME"]) / "bin" / "nvcc"))
    candidates.append(("nvcc", KIT / ".cache" / "cuda12" / "bin" / "nvcc"))
    for kind, path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return Compiler(kind, path)
    if (NVRTC_HOME / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12").is_file():
        return Compiler("NVRTC", NVRTC_HOME)
    return None


def install():
    """Fetches PyPI's CUDA 12.4 NVRTC, runtime-header and CCCL wheels with pip and unpacks them into
    .cache/cuda12-nvrtc (whole or not at all). Returns 0, or 1 with the reason on stderr."""
    if (NVRTC_HOME / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12").is_file():
        print(f"cuda12: NVRTC 12.4 is already in {NVRTC_HOME}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                               "--platform", "manylinux2014_x86_64", "-d", tmp, *WHEELS])
        if proc.returncode != 0:
            print("cuda12: pip download failed (no network, or no PyPI?); the CUDA 12 test stays skipped",
                  file=sys.stderr)
            return 1
        staging = NVRTC_HOME.with_name(NVRTC_HOME.name + ".tmp")
        shutil.rmtree(staging, ignore_errors=True)
        for wheel in sorted(Path(tmp).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(staging)
        shutil.rmtree(NVRTC_HOME, ignore_errors=True)
        staging.rename(NVRTC_HOME)
    print(f"cuda12: NVRTC 12.4 and its headers are in {NVRTC_HOME}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="fetch CUDA 12.4's NVRTC from PyPI")
    args = parser.parse_args(argv)
    if args.install:
        return install()
    compiler = find()
    print(compiler.describe() if compiler else "no CUDA 12 compiler: set NVCC12, or run "
          "python3 -m tests.sim.ptx.cuda12 --install")
    return 0 if compiler else 1


if __name__ == "__main__":
    sys.exit(main())
