"""`python3 -m grader.classroom`: grades a whole class (grader/classroom/cli.py says how)."""
import sys

from grader.classroom.cli import main

sys.exit(main())
