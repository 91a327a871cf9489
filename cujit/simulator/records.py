"""Record scalars as simulated kernels see them.

A host record scalar (``np.void``, e.g. ``arr[0]`` of a structured array) passed to a kernel
is read and written by field *attribute* (``rec.x = 1``), as in numba.cuda, and the written
fields are visible on the host after the launch.  ``np.void`` has only item access
(``rec['x']``), so the simulator hands the kernel a :class:`RecordView` over the same bytes:
writes land in the ``np.void`` itself, which for ``arr[i]`` is a view of ``arr``.
"""
import numpy as np

__all__ = ["RecordView", "as_kernel_record"]


class RecordView:
    """Attribute and item access to the fields of record ``rec`` (an ``np.void``); a nested
    array field reads as a NumPy view, so element writes reach the record too."""
    __slots__ = ("_rec",)

    def __init__(self, rec):
        object.__setattr__(self, "_rec", rec)

    @property
    def dtype(self):
        return self._rec.dtype

    def __getattr__(self, name):
        rec = object.__getattribute__(self, "_rec")
        if rec.dtype.names and name in rec.dtype.names:
            return rec[name]
        raise AttributeError(f"record of dtype {rec.dtype} has no field '{name}'")

    def __setattr__(self, name, value):
        rec = self._rec
        if not (rec.dtype.names and name in rec.dtype.names):
            raise AttributeError(f"record of dtype {rec.dtype} has no field '{name}'")
        rec[name] = value

    def __getitem__(self, key):
        return self._rec[key]

    def __setitem__(self, key, value):
        self._rec[key] = value

    def __repr__(self):
        return f"RecordView({self._rec!r})"


def as_kernel_record(value):
    """``value`` wrapped in a RecordView when it is an ``np.void`` record (not an
    ``np.record``, which has attribute access already); otherwise ``value`` itself."""
    if type(value) is np.void and value.dtype.names:
        return RecordView(value)
    return value
