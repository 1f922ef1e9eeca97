"""What the GPU was doing around a benchmark: its clocks, temperature and power, and the other processes on it.

snapshot() asks nvidia-smi (no NVML binding: the grader uses the standard library only) for every GPU's state and
every compute process; the grader takes one just before and one just after each lab's benchmark. environment()
joins the two with what the harness measured in-process (its bench line: the measured SM clock, the samples
discarded for a throttled clock, the driver and runtime versions) into the record that results.json keeps for the
lab, and warnings() says what in it makes the timing doubtful: another process on the GPU, a throttled clock.

Everything but snapshot() is pure, so the tests feed it recorded nvidia-smi output.
"""
import concurrent.futures
import re
import subprocess

# Queried fields, in nvidia-smi's names, and the keys they get here. The free-text field comes last, so a comma in
# it cannot shift the others.
GPU_FIELDS = (("pci.bus_id", "pci_bus_id"), ("driver_version", "driver_version"), ("clocks.sm", "sm_clock_mhz"),
              ("clocks.max.sm", "sm_clock_max_mhz"), ("clocks.mem", "mem_clock_mhz"),
              ("temperature.gpu", "temperature_c"), ("power.draw", "power_w"), ("pstate", "pstate"),
              ("name", "name"))
APP_FIELDS = (("gpu_bus_id", "pci_bus_id"), ("pid", "pid"), ("used_memory", "used_memory_mib"),
              ("process_name", "process_name"))
NUMERIC = {"sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "temperature_c", "power_w", "pid", "used_memory_mib"}
TIMEOUT = 15.0  # seconds for one nvidia-smi call (it can take seconds on a machine with many GPUs)


def _value(key: str, text: str):
    text = text.strip()
    if not text or text.startswith("[") or text in ("N/A", "Not Supported"):  # [N/A], [Not Supported], [Unknown Error]
        return None
    if key in NUMERIC:
        try:
            number = float(text.split()[0])  # "250.31" (nounits), or "250.31 W" should units slip in
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    return text


def parse_csv(text: str, fields) -> list:
    """The rows of nvidia-smi's `--format=csv,noheader,nounits` output as dicts keyed by fields' second names; the
    last field takes the rest of the line (commas included). Lines with too few fields are skipped."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(",", len(fields) - 1)
        if len(parts) != len(fields):
            continue
        rows.append({key: _value(key, part) for (_, key), part in zip(fields, parts)})
    return rows


def bus_key(bus_id) -> str | None:
    """A PCI bus id in one form for comparing: nvidia-smi writes 00000000:3B:00.0, CUDA 0000:3b:00.0."""
    if not bus_id:
        return None
    domain, _, rest = str(bus_id).strip().rpartition(":")
    domain, _, bus = domain.rpartition(":") if domain.count(":") else ("0", "", domain)
    try:
        return f"{int(domain or '0', 16):x}:{int(bus, 16):02x}:{rest.lower()}"
    except ValueError:
        return str(bus_id).strip().lower()


def _nvidia_smi(args, runner, timeout):
    """(stdout, None) or (None, why it failed)."""
    try:
        proc = runner(["nvidia-smi", *args], capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return None, "nvidia-smi not found"
    except subprocess.TimeoutExpired:
        return None, f"nvidia-smi took longer than {timeout:g} s"
    except OSError as e:
        return None, f"nvidia-smi: {e.strerror}"
    if proc.returncode != 0:
        first = (proc.stdout + proc.stderr).strip().splitlines()
        return None, f"nvidia-smi exited with status {proc.returncode}" + (f": {first[0]}" if first else "")
    return proc.stdout, None


def snapshot(runner=subprocess.run, timeout: float = TIMEOUT) -> dict:
    """{"gpus": [...], "apps": [...]} as nvidia-smi sees them now, or {"error": why} when it cannot be asked. The two
    queries (nvidia-smi takes one kind a call) run at once: each takes about 25 ms, and a passing lab's grading asks
    four times, on the GPU's critical path in a class run."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        asked = [pool.submit(_nvidia_smi, ["--query-gpu=" + ",".join(f for f, _ in GPU_FIELDS),
                                           "--format=csv,noheader,nounits"], runner, timeout),
                 pool.submit(_nvidia_smi, ["--query-compute-apps=" + ",".join(f for f, _ in APP_FIELDS),
                                           "--format=csv,noheader,nounits"], runner, timeout)]
        (gpus, error), (apps, apps_error) = (a.result() for a in asked)
    if error:
        return {"error": error}
    result = {"gpus": parse_csv(gpus, GPU_FIELDS), "apps": parse_csv(apps or "", APP_FIELDS)}
    if apps_error:
        result["error"] = apps_error
    return result


def device_name(snap: dict, visible: str | None = None, order: str | None = None) -> str | None:
    """The name of the GPU a run on this machine uses, for a grading whose labs never reached a benchmark: the one
    name every GPU shares, or, on a machine of mixed GPUs, the first of CUDA_VISIBLE_DEVICES (visible) when it is an
    index and CUDA numbers the GPUs as nvidia-smi does (order: CUDA_DEVICE_ORDER is PCI_BUS_ID); None where
    nvidia-smi could not be asked or it cannot tell."""
    gpus = [g for g in snap.get("gpus") or [] if g.get("name")]
    names = {g["name"] for g in gpus}
    if len(names) == 1:
        return names.pop()
    first = (visible or "").split(",")[0].strip()
    if first.isdigit() and order == "PCI_BUS_ID" and int(first) < len(gpus):
        return gpus[int(first)]["name"]
    return None


def _our_gpu(snap: dict, bench: dict) -> dict | None:
    """The row of snap for the GPU the harness ran on: the one with its PCI bus id, else the only GPU, else the
    first of its name."""
    gpus = snap.get("gpus") or []
    want = bus_key(bench.get("pci_bus_id"))
    if want:
        for g in gpus:
            if bus_key(g.get("pci_bus_id")) == want:
                return g
    if len(gpus) == 1:
        return gpus[0]
    return next((g for g in gpus if g.get("name") and g.get("name") == bench.get("device")), None)


def environment(before: dict, after: dict, bench: dict | None, own_pids=()) -> dict:
    """The record of one benchmark's surroundings, for results.json: the GPU (name, PCI bus id, driver and CUDA
    versions), the SM clock the harness measured and the GPU's maximum, the samples discarded for a throttled
    clock, nvidia-smi's view of the GPU before and after (clocks, temperature, power, pstate), the other compute
    processes on it (before or after; own_pids left out) and the warnings."""
    bench = bench or {}
    gpu_before, gpu_after = _our_gpu(before, bench), _our_gpu(after, bench)
    bus = bus_key(bench.get("pci_bus_id") or (gpu_before or gpu_after or {}).get("pci_bus_id"))
    others = {}
    for snap in (before, after):
        for app in snap.get("apps") or []:
            if app.get("pid") in own_pids:
                continue
            if bus and app.get("pci_bus_id") and bus_key(app.get("pci_bus_id")) != bus:
                continue  # a process on another GPU of this machine
            others.setdefault(app.get("pid"), app)
    env = {
        "gpu": bench.get("device") or (gpu_before or {}).get("name"),
        "pci_bus_id": bench.get("pci_bus_id") or (gpu_before or {}).get("pci_bus_id"),
        "driver_version": (gpu_before or gpu_after or {}).get("driver_version"),
        "cuda_driver": bench.get("driver"),
        "cuda_runtime": bench.get("runtime"),
        "sm_clock_mhz": bench.get("sm_clock_mhz"),
        "sm_clock_min_mhz": bench.get("sm_clock_min_mhz"),
        "sm_clock_max_mhz": bench.get("sm_clock_max_mhz") or (gpu_before or {}).get("sm_clock_max_mhz"),
        "mem_clock_max_mhz": bench.get("mem_clock_max_mhz"),
        "throttled": bench.get("throttled"),
        "throttle_threshold": bench.get("throttle_threshold"),
        "clock_low": bool(bench.get("clock_low")),
        "warmups": bench.get("warmups"),
        "samples": bench.get("samples"),
        "nvidia_smi": {"before": gpu_before, "after": gpu_after},
        "other_processes": list(others.values()),
    }
    errors = [s["error"] for s in (before, after) if s.get("error")]
    if errors:
        env["nvidia_smi_error"] = errors[0]
    env["warnings"] = warnings(env)
    return env


def warnings(env: dict) -> list:
    """What makes a benchmark's timing doubtful, one sentence each."""
    out = []
    others = env.get("other_processes") or []
    if others:
        listed = ", ".join(f"pid {a.get('pid')} {a.get('process_name') or '?'}"
                           + (f" ({a['used_memory_mib']} MiB)" if a.get("used_memory_mib") is not None else "")
                           for a in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        out.append(f"another process was using the GPU around the benchmark ({listed}{more}): its timing may be off; "
                   f"grade again on an idle GPU")
    fraction = env.get("throttle_threshold")
    threshold = f"{100 * fraction:.0f}" if isinstance(fraction, (int, float)) else "75"
    if env.get("clock_low"):
        clock, top = env.get("sm_clock_mhz"), env.get("sm_clock_max_mhz")
        of = f" ({clock:.0f} of {top:.0f} MHz)" if isinstance(clock, (int, float)) and top else ""
        out.append(f"the SM clock stayed under {threshold}% of its maximum through the benchmark{of}: the GPU is "
                   f"throttled (heat, power) or its clocks are locked low; speedups are ratios within one run, but "
                   f"compare them with care")
    elif env.get("throttled"):
        n = env["throttled"]
        out.append(f"{n} sample{'s were' if n != 1 else ' was'} discarded because the SM clock fell under "
                   f"{threshold}% of its maximum (throttling) and taken again")
    return out


IDENTITY_FIELDS = (("memory.total", "memory_mib"), ("compute_cap", "compute_cap"), ("name", "name"))


def identity(visible: str | None = None, order: str | None = None, runner=subprocess.run,
             timeout: float = TIMEOUT) -> dict:
    """The GPU a run on this machine uses, as nvidia-smi (a kit process, never the student's) names it: {"name",
    "memory_mib", "compute_cap" ("9.0")}, or {} where nvidia-smi cannot be asked or cannot tell which GPU
    (device_name's rule). The simulator's check shows it to the runner (grader/sim/sim_target.py: graded_gpu_env)."""
    text, error = _nvidia_smi(["--query-gpu=" + ",".join(f for f, _ in IDENTITY_FIELDS),
                               "--format=csv,noheader,nounits"], runner, timeout)
    if error:
        return {}
    rows = [r for r in parse_csv(text, IDENTITY_FIELDS) if r.get("name")]
    name = device_name({"gpus": rows}, visible, order)
    row = next((r for r in rows if r["name"] == name), None)
    if row is None:
        return {}
    try:
        memory = int(float(row.get("memory_mib") or 0))
    except ValueError:
        memory = 0
    cap = str(row.get("compute_cap") or "")
    return {"name": name, **({"memory_mib": memory} if memory > 0 else {}),
            **({"compute_cap": cap} if re.fullmatch(r"\d+\.\d", cap) else {})}
