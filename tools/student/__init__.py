"""What students run: make check (check.py), make sim (sim.py), make bench (bench.py), make profile (nsight.py)."""
