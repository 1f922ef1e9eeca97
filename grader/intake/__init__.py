"""Intake: a submission's lab files found in an upload (collect.py), archives unpacked safely (unpack.py),
Gradescope's submission metadata (metadata.py)."""
