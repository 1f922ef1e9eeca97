"""The GPU the simulator builds for: mk/sim.mk compiles a lab's device code as PTX for compute_$(SM), SM=75 (the
kit's floor, Turing) unless SM=NN is given as for a GPU build (mk/cuda.mk), and the simulated device reports that
compute capability (sim/runtime_internal.h: it follows the PTX the program carries). What the kit's tools say about
it when a build fails: an intrinsic or type of a later GPU (__reduce_add_sync, bf16 arithmetic: compute capability
8.0) is an nvcc error at compute_75, and the student needs to know which target was built and how to pick another.
And the environment a simulated run gets (sim_env): its report channel, its counts table, its instruction budget,
and, in the simulator's check of a GPU grading, the graded GPU's identity (graded_gpu_env).
"""
import os
import re
from pathlib import Path

DEFAULT_SM = "75"  # mk/sim.mk's SIM_SM when SM is not given
# Warp instructions one launch may run before the simulator stops it as hung (PPL_SIM_MAX_INSTRUCTIONS, unless set):
# the reference solutions need under 3 million at the largest size the simulator grades, and a kernel that loops
# forever reaches 30 million in about 10 s.
SIM_MAX_INSTRUCTIONS = 30_000_000


def sim_sm(env=None) -> str:
    """The SM the simulator builds for: SM from env (default os.environ) when set, else DEFAULT_SM."""
    return (os.environ if env is None else env).get("SM") or DEFAULT_SM


def capability(sm: str) -> str:
    """compute capability "8.0" of an SM "80" (the last digit is the minor version: "100" is 10.0); sm itself when
    it is not a number."""
    return f"{sm[:-1]}.{sm[-1]}" if re.fullmatch(r"\d{2,3}", sm) else sm


def sim_harness_build(kit, env=None) -> Path:
    """mk/sim.mk's default folder of the harness objects for this SM: KIT/build/sim/harness/smNN."""
    return Path(kit) / "build" / "sim" / "harness" / f"sm{sim_sm(env)}"


def target_note(env=None, command: str = "make sim") -> str:
    """The line a failed simulator build ends with: the target it was built for and, at the default, how to build
    for a later GPU (command: the student's command to repeat with SM=NN, such as "make grade SIM=1")."""
    sm = sim_sm(env)
    note = f"The simulator built this for compute capability {capability(sm)} (compute_{sm}"
    if sm != DEFAULT_SM:
        return note + f", SM={sm})."
    return (note + ", the kit's default: the oldest GPU it supports). A function or type of a later GPU that nvcc "
            "calls undefined or not available for this architecture needs that GPU's target, as the course's GPU "
            f"has it: {command} SM=80 for compute capability 8.0 (A100), SM=90 for 9.0 (H100).")


# How nvcc says that the target lacks a function or type: 'identifier "__reduce_add_sync" is undefined', '... is not
# available for this architecture', '... not supported on targets below sm_80'. Anything else (a missing header, a
# typo the compiler words otherwise, a kit part that failed) gets no advice to change the target.
LATER_GPU_WORDS = re.compile(r"is undefined|not available|not supported|requires (sm|compute)_|below (sm|compute)_")


def may_need_later_gpu(output: str) -> bool:
    """Whether a failed build's compiler output could be cured by a later target (then target_note helps)."""
    return bool(LATER_GPU_WORDS.search(output))


# The GPU a GPU grading is graded on, as the simulator's device shows it in that grading's check
# (grader/sim/sim_check.py): the variables of graded_gpu_env, which sim_env adds to every simulated run of this
# process. Set once (set_graded_gpu), by the check, from nvidia-smi; a process that grades on a GPU grades on one.
_graded_gpu: dict = {}


def graded_gpu_env(gpu: dict, specs: tuple) -> dict:
    """The environment that makes the simulator's device the GPU gpu (gpuinfo.identity's {"name", "memory_mib"}):
    its name and memory (PPL_SIM_DEVICE_NAME, PPL_SIM_DEVICE_MEMORY), the target whose PTX it runs where the build
    carries several (PPL_SIM_DEVICE_ARCH, from "compute_cap") and, where grader/gpus.toml knows the model
    (specs: estimate.load_specs's (gpus, model)), its shape and L2 (PPL_SIM_DEVICE,
    PPL_SIM_DEVICE_L2: SMs, threads, blocks and shared memory per SM) and its event clock (PPL_SIM_DEVICE_TIMING:
    the warp instructions it issues a microsecond, SMs x schedulers x clock x the estimate's issue efficiency, and
    the estimate's cost of a launch), so that a runner reading the device's properties or timing a probe kernel
    reads the graded GPU's. Its compute capability is the PTX's the build carries (mk/cuda.mk), which is the GPU's.
    {} for no gpu."""
    if not gpu.get("name"):
        return {}
    env = {"PPL_SIM_DEVICE_NAME": gpu["name"]}
    if gpu.get("compute_cap"):  # of several targets' PTX (a machine of two GPU models), the graded GPU's
        env["PPL_SIM_DEVICE_ARCH"] = gpu["compute_cap"].replace(".", "")
    if gpu.get("memory_mib"):
        env["PPL_SIM_DEVICE_MEMORY"] = str(int(gpu["memory_mib"]) << 20)
    gpus, constants = specs
    model = next((g for g in gpus.values() if g.name == gpu["name"]), None)
    if model is not None:
        env.update(model.device_env())
        env["PPL_SIM_DEVICE_L2"] = str(model.l2_mb << 20)
        rate = model.sms * model.schedulers_per_sm * model.clock_mhz * constants.issue_efficiency
        env["PPL_SIM_DEVICE_TIMING"] = f"{rate:.0f},{constants.launch_us:g}"
    return env


def set_graded_gpu(env: dict) -> None:
    """Makes env (graded_gpu_env's) part of every simulated run's environment from now on (sim_env)."""
    _graded_gpu.clear()
    _graded_gpu.update(env)


def sim_env(counts: bool = False, report=None, budget: bool = False, report_fd: int | None = None) -> dict:
    """The environment of a simulated run: this one, in order (without PPL_SIM_SCHEDULE), plus PPL_SIM_COUNTS=1
    (the counts table on stderr at exit, for people), PPL_SIM_REPORT=report (the report as JSON, a file: `make
    sim` by hand, tools) and PPL_SIM_REPORT_FD (the grader's channel) when asked, and with budget the grader's
    instruction limit (SIM_MAX_INSTRUCTIONS) unless PPL_SIM_MAX_INSTRUCTIONS is set already. The checker's
    OpenMP team is one thread (grader/run/run.py's checker_env says why a team costs where programs run side by
    side)."""
    env = {**os.environ, **_graded_gpu}
    env.pop("PPL_SIM_REPORT_FD", None)  # a descriptor of this process's: only the one asked for here
    env.pop("PPL_SIM_SCHEDULE", None)  # in order unless a caller asks for another (grader/sim/schedules.py)
    env["OMP_NUM_THREADS"] = "1"  # the checker's team: a simulated size (SIM_MAX_N at most) is not worth one
    env["OMP_WAIT_POLICY"] = "passive"
    if counts:
        env["PPL_SIM_COUNTS"] = "1"
    if report:
        env["PPL_SIM_REPORT"] = str(report)
    if report_fd is not None:
        env["PPL_SIM_REPORT_FD"] = str(report_fd)
    if budget:
        env.setdefault("PPL_SIM_MAX_INSTRUCTIONS", str(SIM_MAX_INSTRUCTIONS))
    return env
