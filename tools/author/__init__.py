"""What the kit's authors run: make figures (figures.py), make handouts (render_handouts.py), make skeletons
(make_skeletons.py), make sim-compare (sim_compare.py), make datasets (Makefile, gen_datasets.c), and the CUDA 12 check
(cuda12_check.sh)."""
