"""Score: a lab's rows from its runs' outcomes (score.py) and late days (late.py)."""
