import sys

from tools.student.classroom import main

sys.exit(main())
