"""The grader of the Parallel Patterns Lab (standard library only). `python3 -m grader` (make grade) runs it, its code
in grade.py; labs.toml holds every point and threshold; docs/DESIGN.md describes the harness it drives."""
