"""The grader of the Parallel Patterns Lab (standard library only). grade.py is the entry point; labs.toml holds
every point and threshold; docs/DESIGN.md describes the harness it drives."""
