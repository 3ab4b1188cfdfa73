"""``python -m m3kit`` is the ``m3kit`` command."""

import sys

from m3kit.cli.main import main

sys.exit(main())
