"""Fresh Debian 12 machines for tests/fresh: a minimal root made by mmdebstrap, entered through a user namespace.

FreshMachine(packages) is a root of `mmdebstrap --variant=minbase bookworm` with those packages added: the tarball
is made once and cached under build/fresh/roots/, keyed by the suite, variant and package list. Each machine is a
fresh copy unpacked under build/fresh/machines/. run() executes a shell command in it, as root, with:

- a user namespace mapping uids and gids 0-65535 to the host's (so apt's _apt, dpkg's owners and the sandbox's
  nobody all exist, as on a real machine), made by this process and entered by bubblewrap, whose pivot_root leaves
  the machine able to make namespaces of its own (a chroot could not: the kernel refuses a user namespace to a
  chrooted process, and the grader's sandbox is bubblewrap), with the host's /proc (see bwrap());
- the host's CUDA toolkit bound read-only where nvcc really lives (/usr/local/cuda-13.0), with /usr/local/cuda
  pointing at it and its bin/ on PATH, as NVIDIA's packages leave a machine;
- the host's network as a machine beside it would have it: resolv.conf, the certificate authorities the host added
  (/usr/local/share/ca-certificates: a proxy that re-signs TLS) and the proxy and pip index settings of its
  environment (NETWORK), so that apt-get and pip fetch what the kit's set-up installs, as on a new machine.

unavailable() says why no machine can be made here (no mmdebstrap, no bubblewrap, not root, no user namespaces),
or "". Needs root: the uid map of a real machine needs privilege in the host's namespace.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from grader.patterns import KIT

SUITE, VARIANT = "bookworm", "minbase"
CACHE = KIT / "build" / "fresh"
CLONE_NEWUSER = 0x10000000
IDS = 65536  # uids and gids mapped: 0 .. 65535, nobody (65534) included
PATH = "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
# The host's settings that say how to reach the network, passed on; nothing else of its environment is.
NETWORK = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "PIP_INDEX_URL",
           "PIP_EXTRA_INDEX_URL", "PIP_CERT", "PIP_DEFAULT_TIMEOUT")


def cuda_toolkit() -> Path | None:
    """The host's CUDA toolkit: the folder above nvcc's real bin/ (/usr/local/cuda-13.0), or None."""
    nvcc = shutil.which(os.environ.get("NVCC", "nvcc"))
    return Path(nvcc).resolve().parent.parent if nvcc else None


def unavailable() -> str:
    """Why no fresh machine can be made here, or "" when one can."""
    for tool, package in (("mmdebstrap", "mmdebstrap"), ("bwrap", "bubblewrap")):
        if not shutil.which(tool):
            return f"no {tool} here: apt-get install {package}"
    if os.geteuid() != 0:
        return "not root: a machine's uid map (apt's _apt, the sandbox's nobody) needs root in the host's namespace"
    if cuda_toolkit() is None:
        return "no nvcc: the fresh machines borrow the host's CUDA toolkit"
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"no user namespaces here: {probe.stderr.strip() or 'unshare --user failed'}"
    return ""


def root_tarball(packages: list) -> Path:
    """The cached tarball of a minimal bookworm with packages, made by mmdebstrap when missing."""
    key = hashlib.sha256(f"{SUITE} {VARIANT} {' '.join(sorted(packages))}".encode()).hexdigest()[:16]
    tarball = CACHE / "roots" / f"{SUITE}-{VARIANT}-{key}.tar"
    if tarball.is_file():
        return tarball
    tarball.parent.mkdir(parents=True, exist_ok=True)
    partial = tarball.with_suffix(f".{os.getpid()}.partial.tar")
    done = subprocess.run(["mmdebstrap", "--quiet", f"--variant={VARIANT}", f"--include={','.join(packages)}", SUITE,
                           str(partial)], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"mmdebstrap failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    partial.rename(tarball)
    return tarball


def _new_user_namespace():
    """In the child, before exec: a user namespace of its own (the parent writes its maps)."""
    if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")


class FreshMachine:
    """A fresh copy of a minimal bookworm root with packages (see the module's docstring)."""

    def __init__(self, name: str, packages: list):
        self.name = name
        self.folder = CACHE / "machines" / name
        self.root = self.folder / "root"
        self.log = CACHE / f"{name}.log"
        self.toolkit = cuda_toolkit()
        tarball = root_tarball(packages)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.root.mkdir(parents=True)
        subprocess.run(["tar", "-xf", str(tarball), "-C", str(self.root), "--numeric-owner"], check=True,
                       timeout=600)
        cuda = self.root / "usr" / "local" / "cuda"
        if not cuda.exists():
            cuda.symlink_to(self.toolkit.name)
        (self.root / self.toolkit.relative_to("/")).mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        if LOCAL_CAS.is_dir() and any(LOCAL_CAS.iterdir()):
            shutil.copytree(LOCAL_CAS, self.path(str(LOCAL_CAS)), dirs_exist_ok=True)
            status, output, _ = self.run("update-ca-certificates")
            if status != 0:
                raise RuntimeError(f"update-ca-certificates failed in the fresh root:\n{output[-2000:]}")

    def path(self, inside: str) -> Path:
        """The host's path of a path inside the machine."""
        return self.root / inside.lstrip("/")

    def bwrap(self, cwd: str) -> list:
        # The host's /proc, not a new one (--proc): bubblewrap covers parts of its own /proc, and the kernel then
        # refuses the grader's nested sandbox a proc of its own ("Can't mount proc": tried), as it would not on a
        # machine. So no pid namespace either: the machine's processes see the host's.
        return ["bwrap", "--bind", str(self.root), "/", "--dev", "/dev", "--bind", "/proc", "/proc", "--ro-bind", "/sys",
                "/sys", "--ro-bind", str(self.toolkit), str(self.toolkit), "--ro-bind", "/etc/resolv.conf",
                "/etc/resolv.conf", "--unshare-ipc", "--unshare-uts", "--hostname", "fresh",
                "--die-with-parent", "--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/root",
                "--setenv", "LANG", "C.UTF-8", "--setenv", "TERM", "dumb", "--chdir", cwd,
                *(arg for name in NETWORK if name in os.environ for arg in ("--setenv", name, os.environ[name]))]

    def run(self, command: str, cwd: str = "/root", timeout: float = 1800) -> tuple:
        """(exit status, output, seconds) of bash -c command as root in the machine; the output also goes to
        self.log. The bubblewrap process starts in a user namespace of its own, mapped before it runs."""
        argv = ["sh", "-c", 'read go && exec "$@" </dev/null', "sh", *self.bwrap(cwd), "bash", "-c", command]
        start = time.monotonic()
        with open(self.log, "a") as log:
            log.write(f"\n$ cd {cwd} && {command}\n")
            log.flush()
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", preexec_fn=_new_user_namespace)
            for kind in ("uid", "gid"):
                Path(f"/proc/{proc.pid}/{kind}_map").write_text(f"0 0 {IDS}\n")
            try:
                output, _ = proc.communicate("go\n", timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                output, _ = proc.communicate()
                output += f"\n(stopped after {timeout:g} s)"
            log.write(output)
        return proc.returncode, output, time.monotonic() - start

    def clone_kit(self, to: str = "/srv/kit") -> str:
        """A git clone of the kit's committed HEAD at to inside the machine (where nobody may enter, as README asks
        of root); to."""
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(KIT), str(self.path(to))], check=True,
                       capture_output=True, timeout=600)
        return to

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
