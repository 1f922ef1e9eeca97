"""The kit's tools, by audience: student/ (make check, sim, bench, profile), instructor/ (dist, gradescope, calibrate,
regrade-bench, class-uploads), author/ (figures, handouts, skeletons, sim-compare, datasets). Run them from the kit's
root as modules (python3 -m tools.student.check) or through make."""
