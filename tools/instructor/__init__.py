"""What instructors run: make dist and make gradescope (dist.py, gradescope/), make calibrate (calibrate.py), make
regrade-bench (regrade_bench.py), make class-uploads (make_class.py), and the test submissions they use (variants/)."""
