"""The folder that ``python -m cujit run`` puts first on a child process's ``PYTHONPATH``: it
holds cujit's own ``sitecustomize.py``, which installs the numba alias
(:mod:`cujit.numba_alias`) when ``CUJIT_NUMBA_ALIAS=1``.  Nothing imports this package; it is
a package only so that installs ship the folder."""
