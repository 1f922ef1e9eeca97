"""Tests of the self-study tools, tools/check.py (`make check`) and tools/profile.py (`make profile`); they need no
GPU and no Nsight Compute (fake programs stand in for both). Run from the kit's root:
python3 -m unittest discover -s tests/selfstudy -t ."""
