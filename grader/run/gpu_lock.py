"""Sharing one GPU among the graders of a class (make grade-class GRADERS_PER_GPU=N): their correctness runs and
compute-sanitizer's go side by side, a benchmark runs alone on the GPU.

Most of a correctness run is the data's way to the GPU and the checks on the CPU, so several students' runs share a
GPU well; a benchmark's times would not survive a neighbour, so it waits until the GPU is free and keeps the others'
runs out while it runs. A readers-writer lock on files (flock, so it holds across the class's worker processes and
is released when a process dies): runs take it shared, a benchmark exclusive. A benchmark that waits goes first: it
holds a turnstile that new runs must pass, so a steady stream of runs cannot starve it.
"""
import contextlib
import fcntl
import os
from pathlib import Path


class GpuLock:
    """The lock of one GPU: folder/gpu-ID.lock (the readers-writer lock) and folder/gpu-ID.turnstile."""

    def __init__(self, folder, gpu: str):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.lock_path, self.turnstile_path = folder / f"gpu-{gpu}.lock", folder / f"gpu-{gpu}.turnstile"

    @staticmethod
    def _open(path: Path) -> int:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def shared(self):
        """Held while a student's correctness runs and sanitizers use the GPU: others may too, no benchmark may."""
        lock, turnstile = self._open(self.lock_path), self._open(self.turnstile_path)
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX)  # a waiting benchmark holds it: wait behind it
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
            yield
        finally:
            os.close(turnstile)
            os.close(lock)  # closing releases the flock

    @contextlib.contextmanager
    def exclusive(self):
        """Held while a benchmark runs: the GPU is this grader's alone."""
        lock, turnstile = self._open(self.lock_path), self._open(self.turnstile_path)
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)
            os.close(turnstile)
