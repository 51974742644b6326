"""``python -m rankcraft.cli``: the ``rankcraft`` command line."""

import sys

from . import main

sys.exit(main())
