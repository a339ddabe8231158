from __future__ import annotations

import sys

from pt2bot.cli import main

sys.exit(main())
