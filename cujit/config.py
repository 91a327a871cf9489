"""Run-time settings, read when used.

Each setting has a Numba environment variable (``NUMBA_<NAME>``) and a cujit spelling
(``CUJIT_<NAME>``, which wins when both are set).  Values are read from the environment every
time they are used, so changing ``os.environ`` at run time takes effect; tests may also assign
an attribute (``cujit.config.CUDA_DEALLOCS_COUNT = 3``), which overrides the environment until
``del cujit.config.CUDA_DEALLOCS_COUNT`` or :func:`Config.reset`.

Settings (attribute — environment suffix — type, default):

- ``ENABLE_CUDASIM`` — ``ENABLE_CUDASIM`` — bool, False: use the simulator instead of a GPU.
- ``DISABLE_CUDA`` — ``DISABLE_CUDA`` — bool, False: refuse the CUDA driver (every CUDA call
  raises ``CudaSupportError`` saying so, as numba's); the simulator is not affected.
- ``CUDA_DEALLOCS_COUNT`` — ``CUDA_MAX_PENDING_DEALLOCS_COUNT`` — int, 10: flush the pending
  deallocations queue when it holds more entries than this.
- ``CUDA_DEALLOCS_RATIO`` — ``CUDA_MAX_PENDING_DEALLOCS_RATIO`` — float, 0.2: flush when queued
  bytes exceed this fraction of the device's total memory.
- ``CUDA_MEMORY_MANAGER`` — ``CUDA_MEMORY_MANAGER`` — str, "default": a module whose
  ``_numba_memory_manager`` is the EMM plugin class.
- ``CUDA_PER_THREAD_DEFAULT_STREAM`` — same — bool, False: ``default_stream()`` is per-thread.
- ``CUDA_ARRAY_INTERFACE_SYNC`` — same — bool, True: synchronise a consumed array's stream.
- ``SIM_DEVICE_MEMORY`` — ``CUJIT_SIM_DEVICE_MEMORY`` only — int bytes, 4 GiB: the simulated
  device's capacity.
- ``SIM_CHECKS`` — ``CUJIT_SIM_CHECKS`` only — bool, True: simulator bounds/race/divergence checks.
- ``SIM_GLOBAL_RACES`` — ``CUJIT_SIM_GLOBAL_RACES`` only — bool, True: with ``SIM_CHECKS`` on,
  report unsynchronised conflicting accesses to global memory as ``DataRaceError``; off for
  kernels with deliberate benign races (a ``found[0] = 1`` flag set by many threads).
- ``SIM_DEVICES`` — ``CUJIT_SIM_DEVICES`` only — int 1..16, 1: how many devices the simulator
  reports (peers of each other, for multi-GPU code and its tests).
- ``ACCESS_REPORT`` — ``CUJIT_ACCESS_REPORT`` only — bool, False: record the memory accesses of
  every simulated launch for ``kernel.access_report()`` (docs/access-report.md).
- ``NUMBA_ALIAS`` — ``CUJIT_NUMBA_ALIAS`` only — bool, False: a new Python process resolves
  ``numba.cuda`` to cujit (set by ``python -m cujit run`` for the processes it starts; read by
  cujit's own ``sitecustomize``, docs/numba-alias.md).
- ``NUMBA_COMPAT`` — ``CUJIT_NUMBA_COMPAT`` only — bool, False: answer numba.cuda's capability
  queries as numba.cuda itself does where its answer reflects numba rather than the device:
  on the simulator ``is_bfloat16_supported()`` and ``is_fp8_supported()`` are False, as on
  numba's simulator (which has neither), so code that imports the bfloat16 / FP8 names only
  ``if not config.ENABLE_CUDASIM`` and skips when the query is False stays consistent.  The
  numba alias turns it on (``cujit.numba_alias.install()``) unless the environment sets it.
- ``SIM_VECTOR`` — ``CUJIT_SIM_VECTOR`` only — bool, True: the simulator's vector executor.
- ``SIM_TYPED`` — ``CUJIT_SIM_TYPED`` only — bool, True: simulated kernels run rewritten to the
  compiler's inferred types.
- ``SIM_PROGRESS`` — ``CUJIT_SIM_PROGRESS`` only — bool or auto (None), auto: progress bar of
  long simulated launches (auto: when stderr is a terminal).
- ``PREFETCH`` — ``CUJIT_PREFETCH`` only — bool, True: warm the compiler toolchain up in the
  background when the first kernel is defined.
- ``NVVM_BACKEND`` — ``CUJIT_NVVM_BACKEND`` only — ``llvmlite``, ``nvvm`` or empty, empty:
  who compiles NVVM IR to PTX (empty: libNVVM, llvmlite where it is missing).
- ``CACHE_DIR`` — ``CACHE_DIR`` — path, empty: where ``@jit(cache=True)`` stores kernels.
- ``CUDA_NVRTC_EXTRA_SEARCH_PATHS`` — ``CUDA_NVRTC_EXTRA_SEARCH_PATHS`` — paths joined by
  ``:``, empty: more include directories for NVRTC when ``link=`` compiles CUDA C/C++.
- ``CUDA_HOME``, ``CUDA_PATH`` — those exact names — path, empty: CUDA toolkits searched for
  ``nvdisasm`` (``inspect_sass``).
- ``CUDA_LOW_OCCUPANCY_WARNINGS`` — same — bool, True, and ``CUDA_WARN_ON_IMPLICIT_COPY`` —
  same — bool, True: numba's switches for its performance warnings
  (``cujit.NumbaPerformanceWarning``, on a GPU only): a launch grid of fewer than 128 blocks,
  warned when ``kernel[griddim, blockdim]`` makes the configuration; a host NumPy array that a
  launch copies to the device and back.
- ``CONFORMANCE_TESTS`` — ``CUJIT_CONFORMANCE_TESTS`` only — path, "": numba-cuda's
  ``numba/cuda/tests`` directory for ``python -m cujit conformance`` (docs/conformance.md).
- ``CUDA_DEBUGINFO_DEFAULT`` — ``CUDA_DEBUGINFO`` — bool, False: the default of ``jit()``'s
  ``debug=`` option (numba's ``NUMBA_CUDA_DEBUGINFO``), read when ``jit()`` is called.
- ``CUDA_ENABLE_NRT`` — same — bool, False: numba's switch for its memory runtime (NRT) in
  kernels.  cujit has no NRT; the setting is accepted and kept (numba-cuda's tests save,
  set and restore it), and kernels behave the same either way.
- ``ALWAYS_WARN_UNINIT_VAR`` — same — bool, False: numba's switch for always warning about a
  variable that may be used uninitialised.  Accepted and kept; cujit's typing treats such
  variables the same either way.
- ``DISABLE_PERFORMANCE_WARNINGS`` — same — bool, False: numba's switch that silences its
  performance warnings (both of the above).
- ``DUMP_LLVM`` — same — bool, False: print each kernel's NVVM IR (LLVM IR) to stdout when it
  is compiled, under a ``LLVM DUMP <name>`` rule (numba's ``NUMBA_DUMP_LLVM``).
- ``DUMP_ASSEMBLY`` — same — bool, False: print each kernel's PTX to stdout when it is
  compiled, under an ``ASSEMBLY <name>`` rule (numba's ``NUMBA_DUMP_ASSEMBLY``).  numba's
  other dumps (``DUMP_BYTECODE``, ``DUMP_IR``, ``DUMP_CFG``) show its own bytecode analysis
  and IR, which cujit does not have: ``kernel.inspect_types()`` shows cujit's typing.
- ``OPT`` — ``OPT`` — :class:`OptLevel` (0, 1, 2, 3 or ``max``), 3: numba's optimisation
  level.  As in numba-cuda it is a switch for kernels: 0 makes ``opt=False`` the default
  of ``jit()`` (read when ``jit()`` is called) and of ``compile_ptx`` & co.; any other
  level is ``opt=True`` (libNVVM's ``-opt=3``).  ``config._OptLevel`` is numba's name for
  the class (``config.OPT = config._OptLevel(0)``).
- ``FORCE_CUDA_CC`` — ``FORCE_CUDA_CC`` — compute capability ``"major.minor"`` (or
  ``"major.minor" + "a"``/``"f"`` for an arch-specific target), unset: compile for this
  target instead of the device's (numba-cuda's ``NUMBA_FORCE_CUDA_CC``); its value is a
  tuple ``(major, minor)`` or ``(major, minor, "a")``.
- ``FULL_TRACEBACKS`` — same — bool, False: a TypingError or CompileError of a launch or
  ``kernel.compile()`` keeps the compiler's frames in its traceback (by default they are
  dropped, as numba drops them: the message names the kernel's source line).

Every environment variable cujit reads is one of these (tests/test_architecture.py checks
that no other module reads ``os.environ``); ``python -m cujit info`` shows them all.

A malformed value raises ``ValueError`` naming the variable and the value; so does a value
out of range (a negative count, ratio or capacity, a NaN or infinite ratio).
"""
import math
import os

__all__ = ["Config", "OptLevel", "config"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _parse_bool(text):
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise ValueError(f"expected one of 1/true/yes/on or 0/false/no/off (any case), got {text!r}")


def _parse_bytes(text):
    """Bytes: an integer, or a number with a unit (``512MiB``, ``1.5GiB``, ``2gb``).

    Raises ValueError (never OverflowError: ``infGiB`` used to escape the caller's
    ValueError handler unnamed) for anything else, non-finite numbers included."""
    t = text.strip().lower().replace("_", "")
    units = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
             "kb": 10**3, "mb": 10**6, "gb": 10**9, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    for suffix, mult in sorted(units.items(), key=lambda kv: -len(kv[0])):
        if t.endswith(suffix):
            number, scale = t[: -len(suffix)], mult
            break
    else:
        number, scale = t, 1
    try:
        return int(number) * scale
    except ValueError:
        pass
    try:
        x = float(number) if scale > 1 else None     # fractions only with a unit
    except ValueError:
        x = None
    if x is None or not math.isfinite(x):
        raise ValueError(f"expected an integer number of bytes or a finite number with a unit "
                         f"(k, m, g, kib, mib, gib, tib: powers of 2; kb, mb, gb: powers of 10), "
                         f"e.g. 512MiB or 1.5GiB, got {text!r}")
    return int(x * scale)


def _count(text):
    """A non-negative int (a negative queue limit has no meaning; Numba takes it silently)."""
    n = int(text)
    if n < 0:
        raise ValueError(f"expected an integer >= 0, got {n}")
    return n


def _ratio(text):
    """A finite float >= 0 (NaN would never trigger a flush, infinity never either)."""
    x = float(text)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"expected a finite number >= 0, got {x}")
    return x


def _device_count(text):
    """An int from 1 to 16 (a simulator without devices is ``ENABLE_CUDASIM=0``)."""
    n = int(text)
    if not 1 <= n <= 16:
        raise ValueError(f"expected a device count from 1 to 16, got {n}")
    return n


def _capacity(text):
    """Bytes as :func:`_parse_bytes`, >= 0 (a negative device capacity has no meaning)."""
    n = _parse_bytes(text)
    if n < 0:
        raise ValueError(f"expected a size >= 0 bytes, got {n}")
    return n


def _auto_bool(text):
    """A bool, or ``auto`` (None: decided where it is used, e.g. "stderr is a terminal")."""
    if text.strip().lower() in ("auto", ""):
        return None
    try:
        return _parse_bool(text)
    except ValueError:
        raise ValueError("expected one of 1/true/yes/on, 0/false/no/off or auto (any "
                         f"case), got {text!r}") from None


def _nvvm_backend(text):
    """``llvmlite``, ``nvvm`` or empty (any case): who turns NVVM IR into PTX."""
    t = text.strip().lower()
    if t not in ("", "llvmlite", "nvvm"):
        raise ValueError(f"expected llvmlite or nvvm (or empty: libNVVM, else llvmlite), "
                         f"got {text!r}")
    return t


def _path(text):
    """A file-system path (any text; empty: unset)."""
    return text.strip()


class OptLevel(int):
    """An optimisation level (``NUMBA_OPT``): an int 0-3, and ``"max"`` (level 3, with
    :attr:`is_opt_max` True), as numba's ``config._OptLevel``.  Raises ValueError for any
    other value."""

    def __new__(cls, value):
        raw = value.strip() if isinstance(value, str) else value
        if raw == "max":
            level = 3
        elif raw.__class__ is int or (isinstance(raw, str) and raw in ("0", "1", "2", "3")):
            level = int(raw)
        elif isinstance(raw, int) and not isinstance(raw, bool):    # an OptLevel
            level, raw = int(raw), getattr(raw, "_raw_value", int(raw))
        else:
            level = -1
        if not 0 <= level <= 3:
            raise ValueError(f"optimisation level {value!r} is not one of 0, 1, 2, 3, 'max'")
        new = super().__new__(cls, level)
        new._raw_value = "max" if raw == "max" else level
        return new

    @property
    def is_opt_max(self):
        """True when the level was given as ``"max"``."""
        return self._raw_value == "max"

    def __str__(self):
        # str() is what an override is checked through (Config.__setattr__): keep "max"
        return str(self._raw_value)

    def __repr__(self):
        return f"_OptLevel({self._raw_value!r})"


def _opt_level(text):
    """``0``, ``1``, ``2``, ``3`` or ``max`` (text, an int or an OptLevel) →
    :class:`OptLevel`."""
    return OptLevel(text)


def _cc(text):
    """``"major.minor"``, optionally followed by an arch-specific suffix ``a`` or ``f``
    (``"9.0a"``) → ``(major, minor)`` or ``(major, minor, suffix)``; empty: None.  A tuple
    of that form (an override, numba's ``override_config("FORCE_CUDA_CC", (8, 0))``) is
    checked and returned as a tuple."""
    if isinstance(text, tuple):
        ok = len(text) in (2, 3) and all(n.__class__ is int and n >= 0 for n in text[:2]) \
            and (len(text) == 2 or text[2] in ("", "a", "f"))
        if not ok:
            raise ValueError(f"{text!r} is not a compute capability (major, minor) or "
                             f"(major, minor, 'a' or 'f')")
        return text[:2] if len(text) == 2 or not text[2] else tuple(text)
    if not isinstance(text, str):
        raise TypeError(f"a compute capability is text \"major.minor\" or a tuple, not "
                        f"{type(text).__name__}")
    text = text.strip()
    if not text:
        return None
    major, dot, rest = text.partition(".")
    minor = rest.rstrip("af")
    suffix = rest[len(minor):]
    if not (dot and major.isdigit() and minor.isdigit() and len(suffix) <= 1):
        raise ValueError(f"{text!r} is not a compute capability \"major.minor\" (such as "
                         f"\"9.0\" or \"9.0a\")")
    return (int(major), int(minor), suffix) if suffix else (int(major), int(minor))


#: parsers that also take an already-made value (an override): the rest get str(value)
_VALUE_PARSERS = (_opt_level, _cc)

# attribute -> (env suffix, parser, default, numba spelling exists); a tuple as the suffix
# gives the exact variable names instead (other tools' variables: CUDA_HOME)
_SETTINGS = {
    "ENABLE_CUDASIM": ("ENABLE_CUDASIM", _parse_bool, False, True),
    "DISABLE_CUDA": ("DISABLE_CUDA", _parse_bool, False, True),
    "CUDA_DEALLOCS_COUNT": ("CUDA_MAX_PENDING_DEALLOCS_COUNT", _count, 10, True),
    "CUDA_DEALLOCS_RATIO": ("CUDA_MAX_PENDING_DEALLOCS_RATIO", _ratio, 0.2, True),
    "CUDA_MEMORY_MANAGER": ("CUDA_MEMORY_MANAGER", str, "default", True),
    "CUDA_PER_THREAD_DEFAULT_STREAM": ("CUDA_PER_THREAD_DEFAULT_STREAM", _parse_bool, False, True),
    "CUDA_ARRAY_INTERFACE_SYNC": ("CUDA_ARRAY_INTERFACE_SYNC", _parse_bool, True, True),
    "SIM_DEVICE_MEMORY": ("SIM_DEVICE_MEMORY", _capacity, 4 << 30, False),
    "SIM_CHECKS": ("SIM_CHECKS", _parse_bool, True, False),
    "SIM_GLOBAL_RACES": ("SIM_GLOBAL_RACES", _parse_bool, True, False),
    "SIM_DEVICES": ("SIM_DEVICES", _device_count, 1, False),
    "ACCESS_REPORT": ("ACCESS_REPORT", _parse_bool, False, False),
    "SIM_VECTOR": ("SIM_VECTOR", _parse_bool, True, False),
    "SIM_TYPED": ("SIM_TYPED", _parse_bool, True, False),
    "SIM_PROGRESS": ("SIM_PROGRESS", _auto_bool, None, False),
    "PREFETCH": ("PREFETCH", _parse_bool, True, False),
    "NVVM_BACKEND": ("NVVM_BACKEND", _nvvm_backend, "", False),
    "CACHE_DIR": ("CACHE_DIR", _path, "", True),
    "CUDA_NVRTC_EXTRA_SEARCH_PATHS": ("CUDA_NVRTC_EXTRA_SEARCH_PATHS", _path, "", True),
    "CUDA_HOME": (("CUDA_HOME",), _path, "", False),
    "CUDA_PATH": (("CUDA_PATH",), _path, "", False),
    "NUMBA_ALIAS": ("NUMBA_ALIAS", _parse_bool, False, False),
    "NUMBA_COMPAT": ("NUMBA_COMPAT", _parse_bool, False, False),
    "CUDA_LOW_OCCUPANCY_WARNINGS": ("CUDA_LOW_OCCUPANCY_WARNINGS", _parse_bool, True, True),
    "CUDA_WARN_ON_IMPLICIT_COPY": ("CUDA_WARN_ON_IMPLICIT_COPY", _parse_bool, True, True),
    "CONFORMANCE_TESTS": ("CONFORMANCE_TESTS", _path, "", False),
    "CUDA_DEBUGINFO_DEFAULT": ("CUDA_DEBUGINFO", _parse_bool, False, True),
    "CUDA_ENABLE_NRT": ("CUDA_ENABLE_NRT", _parse_bool, False, True),
    "ALWAYS_WARN_UNINIT_VAR": ("ALWAYS_WARN_UNINIT_VAR", _parse_bool, False, True),
    "DISABLE_PERFORMANCE_WARNINGS": ("DISABLE_PERFORMANCE_WARNINGS", _parse_bool, False, True),
    "FULL_TRACEBACKS": ("FULL_TRACEBACKS", _parse_bool, False, True),
    "DUMP_LLVM": ("DUMP_LLVM", _parse_bool, False, True),
    "DUMP_ASSEMBLY": ("DUMP_ASSEMBLY", _parse_bool, False, True),
    "OPT": ("OPT", _opt_level, OptLevel(3), True),
    "FORCE_CUDA_CC": ("FORCE_CUDA_CC", _cc, None, True),
}


class Config:
    """The settings object (``cujit.config``); see the module docstring for the names."""

    #: numba's name for the class of ``OPT`` values (``config._OptLevel(0)``)
    _OptLevel = OptLevel

    def __init__(self):
        object.__setattr__(self, "_overrides", {})

    def env_names(self, attr):
        """Environment variable names for setting ``attr``, highest priority first."""
        suffix, _, _, numba = _SETTINGS[attr]
        if isinstance(suffix, tuple):
            return list(suffix)
        names = ["CUJIT_" + suffix]
        if numba:
            names.append("NUMBA_" + suffix)
        return names

    def default(self, attr):
        """The built-in default of setting ``attr`` (what applies with no override and no
        environment variable).  AttributeError for an unknown setting."""
        try:
            return _SETTINGS[attr][2]
        except KeyError:
            raise AttributeError(f"cujit.config has no setting {attr!r}") from None

    def source(self, attr):
        """Where the current value of ``attr`` comes from: 'override', an env name, or 'default'."""
        if attr in self._overrides:
            return "override"
        for name in self.env_names(attr):
            if name in os.environ:
                return name
        return "default"

    def __getattr__(self, attr):
        try:
            suffix, parse, default, _ = _SETTINGS[attr]
        except KeyError:
            raise AttributeError(f"cujit.config has no setting {attr!r}; "
                                 f"known: {', '.join(sorted(_SETTINGS))}") from None
        overrides = self._overrides
        if attr in overrides:
            return overrides[attr]
        environ = os.environ
        for name in self.env_names(attr):
            text = environ.get(name)
            if text is not None:
                try:
                    return parse(text)
                except ValueError as exc:
                    raise ValueError(f"environment variable {name}={text!r} is not a valid "
                                     f"{parse.__name__.lstrip('_')} value: {exc}") from None
        return default

    def __setattr__(self, attr, value):
        """Override ``attr`` with ``value``, checked as an environment value would be (a
        ValueError naming it otherwise): an unchecked ``CUDA_DEALLOCS_COUNT = "abc"`` made
        every later free fail inside a finalizer, where the error is swallowed."""
        try:
            parse = _SETTINGS[attr][1]
        except KeyError:
            raise AttributeError(f"cujit.config has no setting {attr!r}") from None
        if value is None and _SETTINGS[attr][2] is None:
            pass                                # "auto", the default of a tri-state
        elif parse in _VALUE_PARSERS:
            try:
                value = parse(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"cujit.config.{attr} = {value!r} is not a valid "
                                 f"{parse.__name__.lstrip('_')} value: {exc}") from None
        elif parse is not str:
            try:
                value = parse(str(value))
            except ValueError as exc:
                raise ValueError(f"cujit.config.{attr} = {value!r} is not a valid "
                                 f"{parse.__name__.lstrip('_')} value: {exc}") from None
        self._overrides[attr] = value

    def __delattr__(self, attr):
        self._overrides.pop(attr, None)

    def reset(self):
        """Drop every attribute override (environment variables are left alone)."""
        self._overrides.clear()

    def as_dict(self):
        """``{attr: (value, source)}`` for every setting, for ``python -m cujit info``."""
        return {a: (getattr(self, a), self.source(a)) for a in _SETTINGS}

    def export(self, attr, value):
        """Set ``attr`` for this process and for the processes it starts: an override (as
        an assignment, checked the same way) and the setting's first environment variable
        (``CUJIT_<NAME>``), which child processes inherit.  ``python -m cujit demo --sim``
        selects the simulator this way."""
        setattr(self, attr, value)
        text = value if isinstance(value, str) else (
            ("1" if value else "0") if isinstance(value, bool) else str(value))
        os.environ[self.env_names(attr)[0]] = text

    def environment(self):
        """A copy (dict) of the process environment, for a process cujit starts (``python -m
        cujit run``, the numba alias's children): config is the one reader of
        ``os.environ``."""
        return dict(os.environ)

    def update_environment(self, mapping):
        """Set the environment variables of ``mapping`` (str -> str) in this process, so the
        processes it starts inherit them (the numba alias's pytest plugin).  TypeError for a
        name or value that is not a str, before anything is set."""
        items = dict(mapping).items()
        for k, v in items:
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"environment variables are str -> str, got {k!r}: {v!r}")
        os.environ.update(items)

    def reader(self, attr, strict=True):
        """A no-argument function returning ``getattr(config, attr)``, fast on the common
        path (for settings read on hot paths, such as the pending queue's limits).

        ``config`` re-reads the environment at every access (two ``os.environ`` lookups
        with key encoding); the reader reads the same sources directly: the override dict,
        then the pre-encoded environment keys, parsing each distinct text once.  A malformed
        value raises the ValueError naming the variable when ``strict``; otherwise the
        default is returned (for code that runs inside finalisers, where an exception is
        swallowed).  AttributeError for an unknown setting."""
        default = self.default(attr)
        data = getattr(os.environ, "_data", None)
        encode = getattr(os.environ, "encodekey", None)
        if data is None or encode is None:      # pragma: no cover - unusual os.environ
            return lambda: getattr(self, attr)
        overrides = self._overrides
        keys = [encode(name) for name in self.env_names(attr)]
        get = data.get
        first = keys[0]
        second = keys[1] if len(keys) > 1 else first
        parsed = {}
        cfg = self

        def read():
            if overrides:
                value = overrides.get(attr, _MISSING)
                if value is not _MISSING:
                    return value
            text = get(first)
            if text is None:
                text = get(second)
                if text is None:
                    return default
            value = parsed.get(text, _MISSING)
            if value is _MISSING:
                try:
                    value = getattr(cfg, attr)   # parses, or raises a clear ValueError
                except ValueError as exc:
                    value = _Invalid(exc)
                parsed[text] = value
            if type(value) is _Invalid:
                if strict:
                    getattr(cfg, attr)           # the error naming the variable set now
                    raise ValueError(str(value.error))
                return default
            return value

        return read

    def readers(self, attrs, strict=True):
        """A no-argument function returning the tuple of ``getattr(config, a)`` for each
        setting ``a`` of ``attrs`` (a sequence of names), for hot paths that read several
        settings together (the pending queue's two limits, read at every free).

        When none of them is overridden and none of their environment variables is set (the
        common case) it costs one call and a few dict lookups and returns the defaults;
        otherwise it reads each through :meth:`reader` (``strict`` as there: a malformed value
        raises the ValueError naming the variable, or gives the default when not ``strict``).
        Any override of any setting takes the second path too, so an assignment or an
        environment change takes effect at the next call.  AttributeError for an unknown
        setting; ValueError for an empty ``attrs``."""
        attrs = tuple(attrs)
        if not attrs:
            raise ValueError("config.readers needs at least one setting name, got none")
        singles = [self.reader(a, strict) for a in attrs]
        defaults = tuple(self.default(a) for a in attrs)
        data = getattr(os.environ, "_data", None)
        encode = getattr(os.environ, "encodekey", None)
        names = [n for a in attrs for n in self.env_names(a)]
        if data is None or encode is None or len(names) > 4:    # pragma: no cover
            return lambda: tuple([r() for r in singles])
        # four chained ``in`` tests are several times cheaper than a loop or any(map(...))
        k0, k1, k2, k3 = (names + names[-1:] * 4)[:4]
        k0, k1, k2, k3 = encode(k0), encode(k1), encode(k2), encode(k3)
        overrides = self._overrides

        def read():
            if overrides or k0 in data or k1 in data or k2 in data or k3 in data:
                return tuple([r() for r in singles])
            return defaults

        return read

    def __dir__(self):
        return list(_SETTINGS) + ["env_names", "source", "reset", "as_dict", "export",
                                  "reader", "readers", "default", "environment",
                                  "update_environment"]


_MISSING = object()


class _Invalid:
    """A cached parse failure: the ValueError config raised for that text."""
    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


config = Config()
