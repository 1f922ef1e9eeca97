"""Tests of the self-study tools, tools/student/check.py (`make check`) and tools/student/nsight.py (`make profile`); they need no
GPU and no Nsight Compute (fake programs stand in for both). Run from the kit's root:
python3 -m unittest discover -s tests/tools/student -t ."""
