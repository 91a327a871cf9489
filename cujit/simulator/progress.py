"""Progress of long simulator launches: blocks done of the grid's total on stderr.

A launch that is still running ``PROGRESS_AFTER_S`` seconds (2 s) after it started shows a
``tqdm`` bar on stderr when stderr is a terminal.  ``CUJIT_SIM_PROGRESS=0`` turns it off,
``=1`` shows it even when stderr is not a terminal (logs); unset means "on a terminal".  When
``tqdm`` is not installed the launch runs without a bar.
"""
import sys
import time
from ..config import config

__all__ = ["BlockProgress", "PROGRESS_AFTER_S"]

#: Seconds a launch runs before its bar appears (short launches never show one).
PROGRESS_AFTER_S = 2.0


# read at every launch: config's fast reader (two dict lookups when nothing is set)
_setting = config.reader("SIM_PROGRESS")


def _wanted():
    v = _setting()
    if v is not None:
        return v
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class BlockProgress:
    """Counts the blocks of one launch of ``total`` blocks (``name``: the kernel's name);
    call :meth:`step` after each block and :meth:`close` at the end (also on errors)."""
    __slots__ = ("total", "name", "done", "start", "bar", "off")

    def __init__(self, total, name):
        self.total = total
        self.name = name
        self.done = 0
        self.start = time.monotonic()
        self.bar = None
        # read at every launch, so a malformed CUJIT_SIM_PROGRESS is an error at once, not
        # only in a launch long enough to show a bar
        self.off = _setting() is False or total < 2

    def step(self):
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
            return
        if self.off or time.monotonic() - self.start < PROGRESS_AFTER_S:
            return
        self.off = True     # decided once: on from here, or never
        if not _wanted():
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=self.total, initial=self.done, desc=f"simulating {self.name}",
                        unit="block", file=sys.stderr, leave=False, dynamic_ncols=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
