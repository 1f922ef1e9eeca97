import sys
from pathlib import Path

# The kit this file is in: the workflow runs it by path with python3 -I (from a copy of the pinned files alone),
# where neither the current folder nor PYTHONPATH is on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tools.student.classroom import main  # noqa: E402

sys.exit(main())
