"""Run: the lab programs run and their result lines read (process.py, run.py, seed.py), runs started ahead
(runs_ahead.py), the GPU shared or held alone (gpu_lock.py), its state around a benchmark (gpuinfo.py), and what a GPU
command says without one (no_gpu.py)."""
