"""compute-sanitizer runs of a lab program: what memcheck, racecheck, synccheck and initcheck find, traced to the
student's file and line, and the grade's "sanitizers" row made of it.

    python3 -m grader.sanitize --lab 04 [--submission labs|solutions|DIR] [--tools racecheck,memcheck]
    (make sanitize LAB=04 [SUBMISSION=...]; from a lab's folder, make sanitize)

The lab program is built as the grader builds it (mk/cuda.mk compiles with -lineinfo, so every finding has a file and
a line) and run once per tool on the small inputs of labs.toml's [suites.NAME.sanitizers]. The lab program is the
checker, which starts the runner (the student's code) in its sandbox: the tool goes around the runner, inside the
sandbox, through the checker's --runner-wrap (each argument of the tool's command line), so it sees the student's
kernels and nothing else.

Where the findings come from. compute-sanitizer writes its text to --log-file /proc/self/fd/N, where N is the write
end of a pipe the grader made and passed with --runner-fd N (the runner keeps N, the sandbox's filter refuses to
close it or dup2 onto it), and the grader reads that pipe as it fills, never the program's stdout or stderr, which
the student's code shares and can close or fill with lookalike lines. Each run gets a fresh --prefix (a random word
in place of `=========`): only lines with it are the tool's. What the student's code can still do: it is a child of
compute-sanitizer and inherits N, so it can append text to the log (never take back what the tool wrote); to pass
its text off as the tool's it must read the prefix from the tool's command line (/proc/PPID/cmdline) and time its
writes to fall between two of the tool's, and it can kill the tool (its parent). Neither hides a finding: a log
whose tool reported errors the grader cannot read ("unreadable"), or that ends before the tool's summary
("incomplete"), fails the row instead of excusing it.

compute-sanitizer writes text for people, each finding a block of lines after its prefix: a headline at the left
("Invalid __global__ write of size 4 bytes", "Race reported between Write access at ... and Read access at ...",
"Barrier error detected. ...", "Uninitialized __global__ memory read of size 4 bytes"), its details indented ("at
KERNEL+0x1f0 in FILE:LINE", "by thread (64,0,0) in block (2,0,0)", "Address ... is out of bounds"), a line of the
prefix alone between two findings. OutputParser reads that layout line by line as it arrives (bounded: a flood of
text costs nothing) rather than a fixed list of messages, and reads both the "at FUNCTION+0xOFFSET in FILE:LINE" of
current versions and the "at 0xOFFSET in FILE:LINE:FUNCTION" of older ones. (Its --save files are binary, for
compute-sanitizer --read only, and the layout of its --xml output is not documented; the text is.)

Whose finding it is (origin_of, classify): a line in the student's file (its name: the grader compiles a copy of it
in the build folder), or in any file that is not the kit's, is the student's; a line is the kit's only when its path
lies under the kit's harness/ folder (or is in CUB or Thrust, which the static checks keep out of the student's
object, line table included); a line in another CUDA header goes with the function it is in. A path the student's
source claims (#line, which the build refuses anyway) that is not the kit's own is therefore the student's. A
finding whose lines are all the kit's is a kit bug, reported as such and costing nothing.

Options of each run: --print-limit, --show-backtrace device (the host backtraces of the driver say nothing to a
student), --target-processes all (a process the runner starts is checked too), --prefix and --log-file (above);
racecheck: --racecheck-report analysis (one finding per pair of lines, not per thread) and --racecheck-detect-level
warn (warnings are the hazards between lanes of one warp: warp-synchronous code, such as a last warp that trusts
`volatile`, which since Volta's independent thread scheduling is a real race); memcheck: --padding, so a write just
past one allocation cannot land unseen in the next. The checker binds the tool's installation folder read-only in
the sandbox (--runner-ro).

Exit status of the command: 0 no findings in the student's file; 1 findings; 2 bad usage or the file does not build;
3 compute-sanitizer is not installed; 77 no CUDA device here (also when compute-sanitizer is missing and nvidia-smi
lists no GPU): it says what it would have done and which simulator commands come nearest (grader/run/no_gpu.py: the
simulator checks every run for the same hazards). Through make, 77 reads "Error 77" and make itself exits 2.

The package: parse.py reads the tool's text (OutputParser), runs.py runs the tools (run_sanitizers), findings.py
says whose line each finding is, explains it and scores the row (score_sanitizers), cli.py is make sanitize.
"""
