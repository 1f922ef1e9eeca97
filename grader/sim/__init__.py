"""The simulator as the grader's back end (simulator.py: `python3 -m grader --simulator`), its report channel
(sim_report.py), adversarial schedules (schedules.py), its build target and environment (sim_target.py), its check of a
GPU grading (sim_check.py) and the roofline estimate from its counts (estimate.py, ../gpus.toml)."""
