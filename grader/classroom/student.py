"""One student graded in a worker process: the upload unpacked, the labs built and statically checked on the
CPU side, then run on a GPU, and the student's folder written (results.json, feedback.txt, record.json)."""
import json
import multiprocessing
import os
import secrets
import shutil
import signal
import time
import traceback
from pathlib import Path

from grader.score import late
from grader.report import report_html
from grader.run import lifetime, runs_ahead
from grader.run.process import kill_running
from grader.sim import sim_check
from grader.compile import static_check
from grader.compile.build import BuildResult
from grader.classroom import intake
from grader.classroom.measurements import save as save_measurements
from grader.classroom.records import (Options, Prepared, RECORD, STATIC_ONLY_MESSAGE, STUDENTS, Turn, blank_row,
                                      final_record, hooks_of, identity, raw_hash, row_of, student_key, write_json)
from grader.config import load_config
from grader.gradescope import fallback_results
from grader.intake.metadata import MetadataError, read_export
from grader.grade import Grader
from grader.run.gpu_lock import GpuLock
from grader.report.report import format_table, write_results
from grader.run.run import NO_DEVICE_MESSAGE, Outcome, run_harness
from grader.score.score import FORBIDDEN, score_static_check
from grader.report.text import printable


# ---- one student, in a worker process ----

_configs = {}


def config_of(options: Options):
    """The Config graded with, loaded once per process (again when the file changes)."""
    try:
        st = os.stat(options.config)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    if _configs.get(options.config, (None, None))[0] != stamp or stamp is None:
        _configs[options.config] = (stamp, load_config(options.config))
    return _configs[options.config][1]


def labs_of(options: Options) -> list:
    """The labs graded."""
    return config_of(options).select(options.lab)


def raise_interrupt(signum, frame):
    """SIGTERM (Slurm's scancel, timeout(1)) stops grading as Ctrl-C does, so that what runs is killed cleanly. Further
    signals are ignored from here on (stop_workers keeps them so; the command's end restores the handlers): timeout(1)
    sends its SIGTERM twice, and a second KeyboardInterrupt raised while the first is handled cut the gradebook's
    last writing short (the class suite's test_sigterm_twice_as_timeout_sends_it, once, under load)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_running()  # now, from this thread: programs run from other threads (the simulator's) hear no interrupt
    raise KeyboardInterrupt


def worker_init(gpu, cores=None, background=False):
    """A worker process: pinned to one GPU (the harness it runs inherits this), given its share of the machine's
    cores for the simulator's runs (cores: grader/run/runs_ahead.py's set_share), at a lower CPU priority with
    background (a build worker that prepares students ahead of the GPU turns, whose own CPU work is the class's critical
    path: runs_ahead.background), and deaf to Ctrl-C and SIGTERM while idle (the task it runs hears them: see
    _interruptible), for a worker that died idle would break its pool and the parent's shutdown."""
    if background:
        runs_ahead.background()  # before any thread: every thread and program of the worker inherits it
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    if cores is not None:
        runs_ahead.set_share(cores)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lifetime.watch_parent()  # a class killed with SIGKILL leaves no worker, nor what its worker ran


def started() -> None:
    """A worker's first task, which only makes it start: a class run's GPU workers are started with the class,
    so that a student's first turn does not wait for a fresh interpreter to import the grader."""


class _interruptible:
    """Ctrl-C (or SIGTERM) stops the task now running (its harness or compiler is killed with its process
    group)."""

    def __enter__(self):
        if multiprocessing.parent_process() is not None:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, raise_interrupt)

    def __exit__(self, *exc):
        if multiprocessing.parent_process() is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return False


def student_folder(options: Options, student: str) -> Path:
    """OUT/students/ID: a student's outputs, apart from the grader's own files in OUT."""
    return Path(options.out) / STUDENTS / student


def prepare(options: Options, entry: intake.Entry, context: str, sim_apart: bool = False) -> Prepared:
    """The CPU side of one student: unpack the upload, skip it if unchanged, else build every lab and run the
    static checks. An unreadable upload is finished here, with its row. sim_apart (the GPU side runs in another
    worker): the simulator's check of the labs is to be a CPU job of its own (simulate), beside the student's GPU
    turn, which then neither waits for it nor holds the GPU while it runs; the seed both grade with is drawn here."""
    with _interruptible():
        start = time.monotonic()
        labs, folder = labs_of(options), student_folder(options, entry.student)
        try:
            got = intake.gather(entry, labs, folder, options.limits)
        except intake.IntakeError as e:
            key = student_key(context, Path(entry.path).name, "unreadable:" + raw_hash(entry.path))
            record = final_record(folder, key, options)
            if record:
                return Prepared(entry.student, row={**record["row"], **identity(entry)}, unchanged=True)
            return Prepared(entry.student, row=write_unreadable(options, entry, labs, folder, key, str(e)))
        files = intake.files_hash(got.submission, labs) + f":submitted {entry.submitted}"
        key = student_key(context, Path(entry.path).name, files)
        record = final_record(folder, key, options, files)
        if record:
            return Prepared(entry.student, row={**record["row"], **identity(entry)}, unchanged=True)
        (folder / RECORD).unlink(missing_ok=True)
        (folder / "results.json").unlink(missing_ok=True)  # never the previous upload's, if this grading fails
        prepared = Prepared(entry.student, key=key, got=got, files=files)
        hooks = hooks_of(options)
        for lab in labs:
            began = time.monotonic()
            built = hooks.build(Path(options.kit), lab.pattern, got.submission / lab.name / lab.source,
                                folder / "build" / lab.name, timeout=options.build_timeout,
                                harness_build=options.harness_build)
            prepared.builds[lab.name] = built
            built_at = time.monotonic()
            prepared.stages[lab.name] = {"build": round(built_at - began, 3)}
            if built.object is not None:
                try:
                    prepared.verdicts[lab.name] = hooks.check(built.object, lab.pattern)
                except static_check.ToolError as e:
                    prepared.verdicts[lab.name] = str(e)
                prepared.stages[lab.name]["static checks"] = round(time.monotonic() - built_at, 3)
        if sim_apart and simulator_checks(options):
            prepared.sim_apart = True
            prepared.seed = options.seed if options.seed is not None else secrets.randbits(63)
        prepared.seconds = time.monotonic() - start
        return prepared


def simulator_checks(options: Options) -> bool:
    """Whether a GPU grading of the class also checks the labs on the simulator (grader/sim/sim_check.py): where the
    class runs the kit's own programs on a GPU (the builds are the CPU side's, so the Grader cannot tell that by its
    build hook)."""
    return bool(options.simulator_check and options.mode == "gpu" and not options.static_only
                and not options.simulator and hooks_of(options).run is run_harness)


def simulate(options: Options, entry: intake.Entry, prepared: Prepared) -> dict:
    """The simulator's check of a student's labs as a CPU job of its own (prepare's sim_apart), beside their GPU
    turn: lab name -> sim_check.Verdict, which complete() lays over the turn's report."""
    with _interruptible():
        labs, folder = labs_of(options), student_folder(options, entry.student)
        return check_on_the_simulator(options, prepared, labs, folder)


def check_on_the_simulator(options: Options, prepared: Prepared, labs, folder: Path) -> dict:
    """The simulator's check of each lab that built and passed its static checks (the ones the GPU side will run),
    graded with prepared.seed (prepare's): lab name -> sim_check.Verdict."""
    grader = Grader(config_of(options), prepared.got.submission, kit=options.kit, build_dir=folder / "build",
                    seed=prepared.seed, build_timeout=options.build_timeout, check=_checked(prepared))
    verdicts = prepared.verdicts
    wanted = [lab for lab in labs if prepared.builds[lab.name].ok and not isinstance(verdicts.get(lab.name), str)
              and score_static_check(lab.name, verdicts[lab.name], lab.source).status != FORBIDDEN]
    return sim_check.check_ahead(grader, Grader, wanted,
                                                  lab_seconds=config_of(options).limits.simulator_check_seconds)


def _checked(prepared: Prepared):
    """The static-check hook that gives the CPU side's verdicts (by the lab's build folder), as the GPU side's."""
    def check(obj, pattern):
        verdict = prepared.verdicts[Path(obj).parent.name]
        if isinstance(verdict, str):
            raise static_check.ToolError(verdict)
        return verdict
    return check


def _static_only_run(program, args, *, timeout, workdir, cwd=None, source="the lab's file") -> Outcome:
    """The run hook of --static-only: nothing runs; every run-time test is reported as not run."""
    return Outcome("no-device", NO_DEVICE_MESSAGE)


def turn(options: Options, entry: intake.Entry, prepared: Prepared) -> Turn:
    """The GPU side of one student: the Grader, with the builds and static checks the CPU side made, runs the
    run-time tests. What is left (the simulator's verdicts laid over, the student's folder written) is complete()'s,
    so that a class run's GPU takes its next student meanwhile."""
    with _interruptible():
        start = time.monotonic()
        labs, folder = labs_of(options), student_folder(options, entry.student)
        builds, check = prepared.builds, _checked(prepared)

        def build(kit, pattern, source, target, timeout=None, harness_build=None):
            return builds[Path(target).name]

        run = _static_only_run if options.static_only else hooks_of(options).run
        # the simulator's check (grader/sim/sim_check.py): a CPU job of its own (simulate) whose verdicts complete()
        # lays over, or else beside this GPU work
        checking = simulator_checks(options)
        if options.simulator:
            from grader.sim.simulator import SimPlatform
            on = {"platform": SimPlatform()}
        else:
            on = {"sim_check": checking, "sim_later": checking and prepared.sim_apart}
        grader = Grader(config_of(options), prepared.got.submission, kit=options.kit,
                        build_dir=folder / "build", timeout=options.timeout, build_timeout=options.build_timeout,
                        seed=options.seed if prepared.seed is None else prepared.seed,
                        harness_build=options.harness_build, build=build,
                        build_harness=lambda *a, **k: BuildResult(True), run=run, check=check, **on)
        if options.graders_per_gpu > 1 and not options.simulator:  # students side by side, benchmarks alone
            grader.gpu_lock = GpuLock(Path(options.out) / "_locks", os.environ.get("CUDA_VISIBLE_DEVICES", "0"))
        report = grader.grade(labs)
        apart = grader.sim_apart
        return Turn(report, time.monotonic() - start,
                    None if apart is None else (sorted(apart.submitted), dict(apart.dropped)))


def complete(options: Options, entry: intake.Entry, prepared: Prepared, done: Turn, sim_verdicts=None) -> dict:
    """The end of one student's grading, after their GPU turn (done): the simulator's verdicts made apart
    (sim_verdicts, from simulate) laid over the report, then results.json, feedback.txt and the record written.
    Returns the row."""
    with _interruptible():
        start = time.monotonic()
        labs, folder = labs_of(options), student_folder(options, entry.student)
        report = done.report
        if done.apart is not None:
            Grader(config_of(options), prepared.got.submission, kit=options.kit, build_dir=folder / "build",
                   seed=report.seed).lay_over_sim_checks(labs, report, sim_verdicts or {}, *done.apart)
        report.seconds += prepared.seconds
        for lab, stages in prepared.stages.items():  # the CPU side's seconds, where the GPU side's hooks took none
            report.stage_seconds.setdefault(lab, {}).update(stages)
        tidy(report, folder, options)
        save_measurements(folder, report, prepared.got, labs, str(options.kit))  # what make rescore scores again
        row = row_of(entry, report, prepared.got, options)
        write_outputs(options, entry, folder, report, prepared.got, row, prepared.key,
                      prepared.seconds + done.seconds + time.monotonic() - start, prepared.files)
        if not options.keep_builds:
            for lab in labs:
                for program in (folder / "build" / lab.name).glob("*_lab"):
                    program.unlink(missing_ok=True)
        return row


def finish(options: Options, entry: intake.Entry, prepared: Prepared) -> dict:
    """The GPU side of one student and its end in one process (turn, then complete): returns the row."""
    return complete(options, entry, prepared, turn(options, entry, prepared))


def grade_one(options: Options, entry: intake.Entry, context: str) -> Prepared:
    """Both sides of one student in one process (no GPU to wait for, or a Slurm task)."""
    prepared = prepare(options, entry, context)
    if prepared.row is None:
        prepared.row = finish(options, entry, prepared)
    return prepared


def tidy(report, folder: Path, options: Options) -> None:
    """The report as a student reads it: paths inside their folder shown relative to it, the submission named by
    the student, and with --static-only, "skipped" rather than "no CUDA device"."""
    prefix = f"{folder}/"
    for r in report.results:
        r.summary, r.detail = r.summary.replace(prefix, ""), r.detail.replace(prefix, "")
        if options.static_only:
            r.summary = r.summary.replace(NO_DEVICE_MESSAGE, STATIC_ONLY_MESSAGE)
    if options.static_only:
        no_device_note = NO_DEVICE_MESSAGE.replace("not run: ", "Run-time tests not run: ")
        report.notes = [STATIC_ONLY_MESSAGE.replace("not run: ", "Run-time tests not run: ")
                        if n == no_device_note else n for n in report.notes]


def header(entry: intake.Entry) -> str:
    who = " ".join(x for x in (entry.name, f"<{entry.email}>" if entry.email else "") if x)
    return f"Student: {entry.student}{' (' + who + ')' if who else ''}, upload {Path(entry.path).name}"


def submission_of(entry: intake.Entry):
    """The entry's grader.intake.metadata.Submission (when, by whom, due dates), read once per process from the export's
    submission_metadata.yml; None when the export has none for it (nothing is late then)."""
    if not entry.metadata:
        return None
    if entry.metadata not in _submissions:
        try:
            _submissions[entry.metadata] = read_export(entry.metadata)
        except MetadataError:
            _submissions[entry.metadata] = {}
    return _submissions[entry.metadata].get(entry.metadata_key)


_submissions = {}


def late_work(options, entry, folder, row) -> list:
    """labs.toml's late-work rule (grader/score/late.py) applied to a graded student as Gradescope applies it: their
    results.json gets the penalty rows, the row its points and a note per late lab; returns the feedback's lines
    ("Late work: ..."), none without a rule."""
    policy = config_of(options).late
    if policy is None:
        return []
    path = folder / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    items = [late.lateness(policy, lab, submission_of(entry)) for lab in row["labs"]]
    scores = late.lab_scores(results)
    marked = late.apply(results, items)
    write_json(path, marked)
    for item in items:
        if item.late and item.lab in row["labs"]:
            lost = item.deduction(scores.get(item.lab, 0.0))
            row["labs"][item.lab] = round(row["labs"][item.lab] - lost, 2)
            row["total"] = round(row["total"] - lost, 2)
            row["notes"] = "; ".join(n for n in (row["notes"], f"{item.lab}: {item.days} late day"
                                                 f"{'s' if item.days != 1 else ''}, -{lost:g}") if n)
    return [line for line in marked.get("output", "").split("\n") if line.startswith("Late work: ")]


def write_outputs(options, entry, folder, report, got, row, key, seconds, files="", graded_at=None) -> None:
    """results.json (late work applied), feedback.txt, then the record (last: it marks the student as done)."""
    config = config_of(options)
    report.notes.append(f"Performance thresholds: {config.calibration['calibrated_on']} "
                        f"(GPU: {config.calibration['gpu']})")
    report.submission = entry.student
    row["seconds"] = round(seconds, 1)
    write_results(report, folder / "results.json")
    report_html.write(report, labs_of(options), folder / "results.json")  # their page, the class report links it
    lateness = late_work(options, entry, folder, row)
    text = printable("\n".join([header(entry), *got.notes, *lateness, "", format_table(report), ""]))
    (folder / "feedback.txt").write_text(text, encoding="utf-8", errors="replace")
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    # graded_at: when the files were graded; a rescore (graded_at given) keeps it and says when it scored them again
    write_json(folder / RECORD, {"student": entry.student, "key": key, "files": files, "row": row,
                                 "graded_at": graded_at or now, **({"rescored_at": now} if graded_at else {})})


def write_unreadable(options, entry, labs, folder, key, why: str) -> dict:
    """The outputs of an upload that could not be unpacked: 0 points, and why."""
    shutil.rmtree(folder / "submission", ignore_errors=True)
    row = blank_row(entry, labs, "unreadable", why)
    row["max_score"] = round(sum(lab.max_score for lab in labs if not lab.bonus), 2)
    fallback = fallback_results(f"Your upload could not be graded: {why}", labs)
    write_json(folder / "results.json", fallback)
    (folder / "feedback.txt").write_text(f"{header(entry)}\nThe upload could not be graded: {why}\n",
                                         encoding="utf-8", errors="replace")
    write_json(folder / RECORD, {"student": entry.student, "key": key, "row": row,
                                 "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    return row


def error_row(entry: intake.Entry, labs, error: BaseException) -> dict:
    """The row of a student the grader failed on (its traceback goes to stderr)."""
    what = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]
    return blank_row(entry, labs, "error", f"the grader failed on this student: {what}")
