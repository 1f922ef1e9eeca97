"""End-to-end tests that need an NVIDIA GPU; they skip themselves without one. Run from the kit's root:
python3 -m unittest discover -s tests/gpu -t ."""
