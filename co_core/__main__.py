"""``python -m co_core`` is ``co``."""

from co_core.cli.main import main

main()
