"""`python3 -m grader.sanitize` (make sanitize): compute-sanitizer's findings for a lab, with file:line."""
import sys

from grader.sanitize.cli import main

sys.exit(main())
