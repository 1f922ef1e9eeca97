"""What the attack suite (test_attacks.py) needs around a grading: the attack table, a throwaway copy of the kit,
hashes of files and folders, and the processes of a copy as /proc shows them (which belong to it, which to kill)."""
import hashlib
import os
import shutil
import signal
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
KIT = HERE.parent.parent
TABLE = HERE / "attacks.toml"
MARKER = ".attack-suite-copy"


def load_table(path=TABLE) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def attack_file(name: str) -> Path | None:
    """The one lab file of attack name's folder (None when the folder holds no .cu file)."""
    found = sorted((HERE / name).glob("*.cu"))
    return found[0] if found else None


def have_gpu() -> bool:
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


# ---- the kit copy ----

def git(folder, *args, check=True) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="attack suite", GIT_AUTHOR_EMAIL="attacks@localhost",
               GIT_COMMITTER_NAME="attack suite", GIT_COMMITTER_EMAIL="attacks@localhost", GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull)
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {folder}: {done.stderr.strip()}")
    return done.stdout


def copy_kit(dest: Path, ref: str | None = None) -> None:
    """dest (which must not exist) becomes a copy of the kit: the working tree's tracked and untracked (not ignored)
    files, or the files of commit ref, or (ref "dir:FOLDER") every file of FOLDER but .git/ and build/; then a git
    repository with one commit, the marker included."""
    dest.mkdir(parents=True)
    if ref and ref.startswith("dir:"):
        shutil.copytree(Path(ref[4:]).resolve(), dest, symlinks=True, dirs_exist_ok=True,
                        ignore=lambda folder, names: [n for n in names if n in (".git", "build")])
    elif ref:
        archive = subprocess.run(["git", "-C", str(KIT), "archive", ref], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    else:
        listed = git(KIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
        for rel in filter(None, dict.fromkeys(listed)):
            src = KIT / rel
            if not (src.is_file() or src.is_symlink()):  # deleted in the working tree, or a submodule
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel, follow_symlinks=False)
    (dest / MARKER).write_text("A copy of the kit made by tests/attacks/test_attacks.py: the attacks act only here.\n")
    git(dest, "init", "-q")
    git(dest, "add", "-A", "-f", ".")
    git(dest, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "the kit, as the attack suite found it")


def tree_hash(folder: Path, skip=()) -> str:
    """A hash of every file's path and contents under folder (symlinks by target), leaving out the paths in skip."""
    h = hashlib.sha256()
    if not folder.exists():
        return "missing"
    for path in sorted(folder.rglob("*")):
        if any(path == s or s in path.parents for s in skip):
            continue
        rel = str(path.relative_to(folder)).encode()
        if path.is_symlink():
            h.update(b"L" + rel + b"\0" + os.readlink(path).encode() + b"\0")
        elif path.is_file():
            h.update(b"F" + rel + b"\0")
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


# ---- processes ----

def _read(path: str, limit: int = 1 << 16) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


@dataclass
class Proc:
    pid: int
    ppid: int
    state: str
    start: int  # clock ticks after boot
    rss: int  # bytes
    comm: str
    cmdline: str


def proc_info(pid: int) -> Proc | None:
    stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
    end = stat.rfind(")")
    if end < 0:
        return None
    fields = stat[end + 2:].split()
    try:
        rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        info = Proc(pid, int(fields[1]), fields[0], int(fields[19]), rss, stat[stat.find("(") + 1:end],
                    _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip())
    except (IndexError, ValueError):
        return None
    return info


def all_pids() -> set:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def belongs(pid: int, root: str, cmdline: str) -> bool:
    """Whether process pid is one of the kit copy at root: its command line, working folder, executable or
    environment names a path inside it."""
    inside = root + "/"
    if inside in cmdline + " " or _link(f"/proc/{pid}/cwd") in (root,) or _link(f"/proc/{pid}/cwd").startswith(
            inside) or _link(f"/proc/{pid}/exe").startswith(inside):
        return True
    return inside.encode() in _read(f"/proc/{pid}/environ", 1 << 20)


def scrubbed(pid: int) -> bool:
    """Whether process pid runs with (almost) no environment: a shell an attack started with `env -i` so that its
    environment no longer names the copy. Other shells with parent 1 (other users' jobs on a shared machine) are not
    the suite's business."""
    return len([v for v in _read(f"/proc/{pid}/environ", 1 << 20).split(b"\0") if v]) < 4


def copy_processes(root: str, exclude=()) -> list:
    found = []
    for pid in all_pids() - set(exclude):
        info = proc_info(pid)
        if info and belongs(pid, root, info.cmdline):
            found.append(info)
    return found


def boot_ticks_now() -> int:
    """Now, in clock ticks after boot (the unit of /proc/PID/stat's start time)."""
    uptime = float(_read("/proc/uptime").split()[0])
    return int(uptime * os.sysconf("SC_CLK_TCK"))


def kill_pids(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
