"""``python -m cujit {demo,info,bench}`` — see :mod:`cujit.cli`."""
import sys

from .cli import main

sys.exit(main())
