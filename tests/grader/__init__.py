"""Unit tests of the grader (grader/); they need no GPU. Run from the kit's root:
python3 -m unittest discover -s tests/grader -t ."""
