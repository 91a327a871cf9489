"""Old import path of :mod:`cujit.runtime.streams` (before the runtime/ package), kept for code
and branches written against it: importing it gives that module itself, so attribute reads and
test monkeypatches reach the real one.  New code imports ``cujit.runtime.streams``; users import
from ``cujit``."""
import sys

from .runtime import streams as _module

sys.modules[__name__] = _module
