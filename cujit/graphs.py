"""Old import path of :mod:`cujit.runtime.graphs` (before the runtime/ package), kept for code
and branches written against it: importing it gives that module itself, so attribute reads and
test monkeypatches reach the real one.  New code imports ``cujit.runtime.graphs``; users import
from ``cujit``."""
import sys

from .runtime import graphs as _module

sys.modules[__name__] = _module
