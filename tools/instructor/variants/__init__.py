"""Test submissions made from the reference solutions: known-wrong ones (wrong.py, mutations.toml) for the grader's
tests and make class-uploads, and near-threshold ones (near.py) for make regrade-bench."""
