"""``python -m bb_robot.cli``: the same as the ``bb-robot`` command."""

import sys

from bb_robot.cli.main import main

sys.exit(main())
