"""Compile: what a lab's file may ask of the preprocessor (source_check.py), nvcc under limits in bubblewrap (build.py,
build_sandbox.py), and what its object may call (static_check.py, objfile.py, ../lab_calls.toml)."""
