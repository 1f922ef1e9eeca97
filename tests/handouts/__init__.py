"""Tests of the handouts, their figures and `make handouts`; they need no GPU. Run from the kit's root:
python3 -m unittest discover -s tests/handouts -t ."""
