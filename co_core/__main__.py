"""``python -m co_core`` is ``co``."""

from co_core.cli import main

main()
