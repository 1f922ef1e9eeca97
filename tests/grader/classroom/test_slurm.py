"""The Slurm path of grader/classroom/: the job scripts, and a whole class graded by a real single-node Slurm.

The cluster test starts MUNGE and Slurm (Debian's slurm-wlm) on the loopback interface, from a slurm.conf and a
MUNGE key it generates in a temporary folder, as root (as the kit's CI runs): slurmctld and slurmd in the
foreground, as this test's children, stopped when it ends. It submits `grader.classroom slurm --submit` for a small
synthetic class, graded with the static checks only (no GPU needed), waits for the merge job and checks the
gradebook. It skips, saying why, where slurm-wlm or nvcc is not installed, where it is not root, or when the
daemons do not start.
"""
import csv
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader.classroom import slurm
from grader.patterns import KIT
from tools.instructor import make_class
from tests.timing import slow

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")
JOB_WAIT = 600  # seconds for the whole class (the harness may have to be built first)


class Scripts(unittest.TestCase):
    def test_three_chained_jobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            settings = slurm.Settings(python="/usr/bin/python3", kit="/opt/kit with space", gpu=True, sm="90",
                                      partition="gpu", account="cs101", time="00:20:00", cpus=8, max_running=4,
                                      extra=("--qos=exam",))
            folder = slurm.write_scripts(Path(tmp) / "out", tasks=5, settings=settings)
            grade = (folder / "grade.sbatch").read_text()
            for line in ("#SBATCH --array=0-4%4", "#SBATCH --gres=gpu:1", "#SBATCH --partition=gpu",
                         "#SBATCH --account=cs101", "#SBATCH --cpus-per-task=8", "#SBATCH --time=00:20:00",
                         "#SBATCH --qos=exam", "cd '/opt/kit with space'", "export SM=90",
                         f"#SBATCH --output={folder}/logs/grade-%A_%a.out"):
                self.assertIn(line + "\n", grade)
            self.assertIn(f"/usr/bin/python3 -m grader.classroom task --out {Path(tmp) / 'out'} --task "
                          f'"$SLURM_ARRAY_TASK_ID"', grade)
            prepare = (folder / "prepare.sbatch").read_text()
            self.assertIn("-m grader.classroom harness --out", prepare)
            self.assertNotIn("--gres", prepare)  # SM given: the harness needs no GPU to build
            self.assertNotIn("--gres", (folder / "merge.sbatch").read_text())
            submit = (folder / "submit.sh").read_text()
            self.assertIn("--dependency=afterok:", submit)
            self.assertIn("--dependency=afterany:", submit)
            self.assertTrue(os.access(folder / "submit.sh", os.X_OK))
            no_sm = slurm.write_scripts(Path(tmp) / "o2", 1, slurm.Settings(python="p", kit="/k"))
            self.assertIn("--gres=gpu:1", (no_sm / "prepare.sbatch").read_text())  # built for the node's GPU

    def test_a_gpu_type_or_constraint(self):
        with tempfile.TemporaryDirectory() as tmp:
            settings = slurm.Settings(python="p", kit="/k", gpu_type="a100", constraint="a100|h100")
            folder = slurm.write_scripts(Path(tmp), 2, settings)
            for name in ("prepare.sbatch", "grade.sbatch"):  # prepare builds for its node's GPU: no SM given
                text = (folder / name).read_text()
                self.assertIn("#SBATCH --gres=gpu:a100:1\n", text)
                self.assertIn("#SBATCH --constraint=a100|h100\n", text)
            self.assertNotIn("--gres", (folder / "merge.sbatch").read_text())
        self.assertEqual(slurm.check_settings(settings), "")
        for bad in (slurm.Settings(python="p", kit="/k", gpu_type="a100:2"),
                    slurm.Settings(python="p", kit="/k", constraint="a100\n#SBATCH --mem=1T"),
                    slurm.Settings(python="p", kit="/k", extra=("--qos=x\ny",))):
            with self.subTest(settings=bad):
                self.assertTrue(slurm.check_settings(bad))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def why_no_cluster() -> str | None:
    missing = [d for d in DAEMONS if not shutil.which(d, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
    if missing:
        return f"slurm-wlm is not installed (no {', '.join(missing)}): apt-get install slurm-wlm"
    if os.geteuid() != 0:
        return "the single-node Slurm test runs slurmd and munged as root, as CI does; this is not root"
    if not shutil.which(os.environ.get("NVCC", "nvcc")):
        return "nvcc not found: the class's labs are really built (install the CUDA toolkit)"
    return None


class Cluster:
    """MUNGE, slurmctld and slurmd on loopback, configured in folder."""

    def __init__(self, folder: Path):
        self.folder, self.procs = folder, []
        self.node = socket.gethostname().split(".")[0]
        self.sbin = ":".join(p for p in ("/usr/sbin", "/sbin") if os.path.isdir(p))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SQUEUE_"))}
        self.env["SLURM_CONF"] = str(folder / "slurm.conf")
        self.env["PATH"] = f"{self.env.get('PATH', '')}:{self.sbin}:/usr/local/cuda/bin"

    def tool(self, name) -> str:
        return shutil.which(name, path=self.env["PATH"])

    def start(self) -> None:
        f = self.folder
        for sub in ("munge", "state", "spool", "log"):
            (f / sub).mkdir(mode=0o700)
        key = f / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        socket_path = f / "munge" / "munge.socket"
        self.spawn("munged", "--foreground", "--force", f"--key-file={key}", f"--socket={socket_path}",
                   f"--pid-file={f / 'munge' / 'munged.pid'}", f"--log-file={f / 'log' / 'munged.log'}",
                   f"--seed-file={f / 'munge' / 'seed'}")
        self.wait_for(lambda: socket_path.exists(), "munged did not start")
        cpus = os.cpu_count() or 1
        (f / "slurm.conf").write_text("\n".join([
            "ClusterName=ppltest", f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            "AuthType=auth/munge", f"AuthInfo=socket={socket_path}", "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={f / 'state'}", f"SlurmdSpoolDir={f / 'spool'}",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}", f"SlurmdPidFile={f / 'slurmd.pid'}",
            f"SlurmctldLogFile={f / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={f / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "SchedulerType=sched/backfill", "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "MpiDefault=none", "ReturnToService=2", "MailProg=/bin/true",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN",
            f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP", ""]))
        self.spawn("slurmctld", "-D", "-i", "-f", str(f / "slurm.conf"))
        time.sleep(1)
        self.spawn("slurmd", "-D", "-f", str(f / "slurm.conf"), "-N", self.node)
        self.wait_for(lambda: "idle" in self.run("sinfo", "-h", "-o", "%T").stdout, "the node did not come up")

    def spawn(self, name, *args) -> None:
        log = open(self.folder / "log" / f"{name}.out", "w")
        self.procs.append(subprocess.Popen([self.tool(name), *args], stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, env=self.env, start_new_session=True))
        log.close()

    def run(self, *argv, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([self.tool(argv[0]) or argv[0], *argv[1:]], capture_output=True, text=True,
                              env=self.env, timeout=60, **kw)

    def wait_for(self, ready, what: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                break
            if ready():
                return
            time.sleep(0.5)
        logs = "\n".join(p.read_text()[-1500:] for p in sorted((self.folder / "log").glob("*")) if p.is_file())
        raise RuntimeError(f"{what}:\n{logs}")

    def job_state(self, job: str) -> str:
        out = self.run("scontrol", "show", "job", job).stdout
        states = re.findall(r"JobState=(\w+)", out)
        return states[0] if len(set(states)) == 1 else ("PENDING" if "PENDING" in states else "RUNNING")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


@unittest.skipIf(why_no_cluster(), why_no_cluster() or "")
class SingleNodeSlurm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-slurm-")
        Path(cls.tmp.name).chmod(0o700)
        cls.cluster = Cluster(Path(cls.tmp.name) / "cluster")
        cls.cluster.folder.mkdir()
        try:
            cls.cluster.start()
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            cls.cluster.stop()
            cls.tmp.cleanup()
            raise unittest.SkipTest(f"Slurm did not start here: {str(e)[:1500]}")

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls.tmp.cleanup()

    @slow  # 41 s on 2 cores, a real single-node Slurm (tests/timing.py: make test-all's)
    def test_a_class_graded_by_a_job_array(self):
        root = Path(self.tmp.name)
        uploads, out = root / "uploads", root / "out"
        make_class.make_class(uploads, 3, "03")
        (uploads / "broken.zip").write_text("not a zip")
        env = dict(self.cluster.env)
        submitted = subprocess.run(
            [sys.executable, "-m", "grader.classroom", "slurm", str(uploads), "--out", str(out), "--lab", "03",
             "--static-only", "--sm", "75", "--batch", "2", "--cpus", "1", "--time", "00:20:00", "--submit"],
            cwd=KIT, capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(submitted.returncode, 0, submitted.stdout + submitted.stderr)
        self.assertIn("4 students in 2 array tasks of 2", submitted.stderr)
        jobs = dict(re.findall(r"(prepare|grade|merge)=(\d+)", submitted.stdout))
        self.assertEqual(set(jobs), {"prepare", "grade", "merge"}, submitted.stdout)
        for job in jobs.values():
            self.addCleanup(self.cluster.run, "scancel", job)
        deadline = time.monotonic() + JOB_WAIT
        while time.monotonic() < deadline and self.cluster.job_state(jobs["merge"]) in ("PENDING", "RUNNING",
                                                                                      "CONFIGURING", "COMPLETING"):
            time.sleep(2)
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted((out / "_slurm/logs").glob("*")))
        self.assertEqual(self.cluster.job_state(jobs["merge"]), "COMPLETED", logs)
        self.assertEqual(self.cluster.job_state(jobs["grade"]), "COMPLETED", logs)
        with open(out / "gradebook.csv", newline="") as f:
            book = {r["student"]: r for r in csv.DictReader(f)}
        self.assertEqual(sorted(book), ["broken", "student01", "student02", "student03"], logs)
        self.assertEqual(book["broken"]["status"], "unreadable")
        for student in ("student01", "student02", "student03"):
            self.assertEqual(book[student]["status"], "static only", logs)
            self.assertTrue((out / "students" / student / "results.json").is_file())
            self.assertIn("static checks", (out / "students" / student / "feedback.txt").read_text())
        self.assertEqual(len(list((out / "_slurm/logs").glob("grade-*_*.out"))), 2)
        self.assertIn("gradebook:", (next((out / "_slurm/logs").glob("merge-*.out"))).read_text())


if __name__ == "__main__":
    unittest.main()
