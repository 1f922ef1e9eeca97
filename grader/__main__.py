"""`python3 -m grader` (make grade): grades one submission; grader/grade.py says how."""
import sys

from grader.grade import main

sys.exit(main())
