"""Grading a whole class (`python3 -m grader.classroom`, make grade-class): one upload per student, every lab graded
as `python3 -m grader` grades it, into one gradebook.

    intake.py     the students of an export and their ids; each upload unpacked safely, each lab's file picked
    records.py    the options, the key that lets a rerun skip a student, records, rows and the class file
    student.py    one student graded in a worker process (build and static checks, then the GPU runs)
    pool.py       the worker pools (CPU builds, one worker per GPU), the GPUs found, progress and its ETA
    gradebook.py  gradebook.csv (points, and per lab the speedup and time measured) and the closing summary
    closing.py    after the grading: overrides laid over the rows, the gradebook, exports, similarity, class report
    overrides.py  the course staff's overrides file (student,lab,points,reason)
    lms.py        canvas.csv (Canvas's gradebook import) and gradescope.csv
    measurements.py, rescore.py   what each grading measured, and `make rescore`: the class scored again under labs.toml
    roundtrip.py  the course GPU's results in the Gradescope autograder (make gradescope CLASS=OUT)
    similarity.py shared code between students, lab by lab (copydetect): similarity.html (make similarity)
    class_report.py, class_charts.py   report.html: the class's page for a TA, and its matplotlib charts
    slurm.py      the same as a Slurm job array: the job scripts, the tasks and the merge
    cli.py        the command line (grade, slurm, task, harness, merge)
"""
