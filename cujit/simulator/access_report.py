"""The access report as data and as text: rows per (kernel, source line, array, load/store),
warnings above a threshold with the fix in words (docs/access-report.md).

Thresholds: a global-memory row warns when its coalescing efficiency (ideal sectors / sectors
touched, per warp request) is below :data:`MIN_EFFICIENCY` (50 %); a shared-memory row warns
when its average conflict degree is at least :data:`MIN_CONFLICT` (2) times the ideal.
"""
import linecache
from dataclasses import dataclass, asdict

__all__ = ["AccessReport", "AccessRow", "SiteTable", "MIN_EFFICIENCY", "MIN_CONFLICT"]

MIN_EFFICIENCY = 0.5
MIN_CONFLICT = 2.0


@dataclass(frozen=True)
class AccessRow:
    """One row of the report: the accesses of ``kernel`` to array ``array`` in memory
    ``space`` (``"global"`` or ``"shared"``) by ``op`` (``"load"``/``"store"``) at
    ``filename:lineno`` (``source`` is the line's text).

    ``requests``: warp requests recorded.  Global rows: ``sectors_per_request`` (average
    distinct 32-byte sectors), ``ideal_sectors_per_request`` and ``efficiency`` (their ratio,
    1.0 is fully coalesced).  Shared rows: ``ways`` (average conflict degree: the most
    distinct 4-byte words one of the 32 banks serves), ``max_ways`` and ``ideal_ways``.  The
    other kind's fields are None.  ``hint``: the fix in words when the row is over the
    threshold, else None."""
    kernel: str
    filename: str
    lineno: int
    source: str
    array: str
    space: str
    op: str
    requests: int
    sectors_per_request: float = None
    ideal_sectors_per_request: float = None
    efficiency: float = None
    ways: float = None
    max_ways: int = None
    ideal_ways: float = None
    hint: str = None

    @property
    def flagged(self):
        """True when the row is over the report's threshold (it has a hint)."""
        return self.hint is not None


def _mode(deltas):
    """The most common byte distance between neighbouring lanes (None if none)."""
    if not deltas:
        return None
    return max(deltas.items(), key=lambda kv: (kv[1], -abs(kv[0])))[0]


def _global_hint(name, itemsize, shape, strides, delta, spr, ideal):
    eff = f"{spr:.1f} sectors of 32 bytes per warp request where {ideal:.1f} would do"
    if delta is not None and delta != 0 and len(shape) >= 2:
        ad = abs(delta)
        for axis, s in enumerate(strides[:-1]):
            if ad == abs(s) and abs(strides[-1]) == itemsize:
                which = "slow (first)" if axis == 0 else f"slow (axis {axis})"
                return (f"neighbouring threads (threadIdx.x) index the {which} axis of the "
                        f"C-ordered array '{name}' (addresses {ad} bytes apart; {eff}): swap "
                        f"the indices so threadIdx.x indexes the last axis")
    if delta is not None and abs(delta) > itemsize:
        return (f"neighbouring threads (threadIdx.x) access '{name}' {abs(delta)} bytes apart "
                f"({abs(delta) // itemsize} elements; {eff}): make consecutive threads access "
                f"consecutive elements, or stage the data through shared memory")
    return (f"the lanes of a warp touch {eff} in '{name}': make consecutive threads access "
            f"consecutive elements")


def _shared_hint(name, itemsize, shape, strides, delta, ways):
    n = f"{ways:.0f}" if float(ways).is_integer() else f"{ways:.1f}"
    if delta is not None and len(shape) == 2 and abs(delta) == abs(strides[0]) and delta:
        return (f"shared array '{name}' indexed [tx, ty] by threads of consecutive tx "
                f"(threadIdx.x on the first axis): bank conflict of {n} ways; index [ty, tx] "
                f"or pad the row to {shape[1] + 1} elements")
    if delta is not None and delta and abs(delta) % 4 == 0:
        return (f"shared array '{name}': neighbouring threads access words {abs(delta) // 4} "
                f"apart: bank conflict of {n} ways; make consecutive threads access "
                f"consecutive 4-byte words, or pad so the stride is odd in words")
    return (f"shared array '{name}': bank conflict of {n} ways; make consecutive threads "
            f"access consecutive 4-byte words")


class SiteTable:
    """Statistics of the access sites of one kernel, accumulated over blocks and launches.

    ``info[sid]``: ``(kernel, filename, lineno, space, op, array, itemsize, shape, strides)``;
    per site: ``requests``, ``sectors`` (global: total distinct sectors), ``ideal`` (global:
    total ideal sectors; shared: total ideal ways), ``ways`` (shared: total ways),
    ``max_ways``, and ``deltas`` (byte distance between lanes ``k`` and ``k + 1`` of one
    request -> count), which the report's hints read."""

    def __init__(self):
        self.info = []
        self.requests = []
        self.sectors = []
        self.ideal = []
        self.ways = []
        self.max_ways = []
        self.deltas = []

    def add_site(self, info):
        self.info.append(info)
        for lst in (self.requests, self.sectors, self.ideal, self.ways, self.max_ways):
            lst.append(0)
        self.deltas.append({})
        return len(self.info) - 1

    def merge(self, other):
        """Add ``other``'s statistics to this table (sites matched by their info)."""
        index = {inf: i for i, inf in enumerate(self.info)}
        for j, inf in enumerate(other.info):
            i = index.get(inf)
            if i is None:
                i = index[inf] = self.add_site(inf)
            self.requests[i] += other.requests[j]
            self.sectors[i] += other.sectors[j]
            self.ideal[i] += other.ideal[j]
            self.ways[i] += other.ways[j]
            self.max_ways[i] = max(self.max_ways[i], other.max_ways[j])
            d = self.deltas[i]
            for k, n in other.deltas[j].items():
                d[k] = d.get(k, 0) + n


class AccessReport:
    """The access report of recorded simulated launches (``kernel.access_report()``, or the
    object ``with cujit.access_report() as rep`` binds).

    ``rows``: :class:`AccessRow` list, by kernel, file and line; ``warnings``: the rows over
    the threshold (each has ``hint``); ``kernels``: kernel names; ``row(lineno, ...)`` finds
    rows; ``as_dicts()`` plain dicts for JSON; ``str(report)`` a table followed by the
    warnings."""

    def __init__(self, tables):
        self._table = SiteTable()
        for t in tables:
            self._table.merge(t)
        self._rows = None

    def _add(self, table):
        self._table.merge(table)
        self._rows = None

    @property
    def rows(self):
        if self._rows is None:
            self._rows = self._make_rows()
        return list(self._rows)

    @property
    def warnings(self):
        return [r for r in self.rows if r.flagged]

    @property
    def kernels(self):
        return sorted({r.kernel for r in self.rows})

    def row(self, lineno, array=None, op=None, kernel=None):
        """Rows at source line ``lineno``, optionally only of ``array``/``op``/``kernel``."""
        return [r for r in self.rows if r.lineno == lineno
                and (array is None or r.array == array) and (op is None or r.op == op)
                and (kernel is None or r.kernel == kernel)]

    def as_dicts(self):
        """The rows as plain dicts (JSON-ready)."""
        return [asdict(r) for r in self.rows]

    def _make_rows(self):
        t = self._table
        groups = {}
        for i, info in enumerate(t.info):
            if not t.requests[i]:
                continue
            kernel, filename, lineno, space, op, name = info[:6]
            groups.setdefault((kernel, filename, lineno, space, op, name), []).append(i)
        rows = []
        for key, ids in groups.items():
            kernel, filename, lineno, space, op, name = key
            itemsize, shape, strides = t.info[ids[0]][6:9]
            req = sum(t.requests[i] for i in ids)
            deltas = {}
            for i in ids:
                for d, n in t.deltas[i].items():
                    deltas[d] = deltas.get(d, 0) + n
            delta = _mode(deltas)
            source = linecache.getline(filename, lineno).strip()
            if space == "global":
                spr = sum(t.sectors[i] for i in ids) / req
                ideal = sum(t.ideal[i] for i in ids) / req
                eff = ideal / spr if spr else 1.0
                hint = _global_hint(name, itemsize, shape, strides, delta, spr, ideal) \
                    if eff < MIN_EFFICIENCY else None
                rows.append(AccessRow(kernel, filename, lineno, source, name, space, op, req,
                                      sectors_per_request=spr, ideal_sectors_per_request=ideal,
                                      efficiency=eff, hint=hint))
            else:
                ways = sum(t.ways[i] for i in ids) / req
                ideal = sum(t.ideal[i] for i in ids) / req
                hint = _shared_hint(name, itemsize, shape, strides, delta, ways) \
                    if ways >= MIN_CONFLICT * ideal else None
                rows.append(AccessRow(kernel, filename, lineno, source, name, space, op, req,
                                      ways=ways, max_ways=max(t.max_ways[i] for i in ids),
                                      ideal_ways=ideal, hint=hint))
        rows.sort(key=lambda r: (r.kernel, r.filename, r.lineno, r.space, r.array, r.op))
        return rows

    def __str__(self):
        rows = self.rows
        if not rows:
            return "access report: no recorded global or shared memory accesses"
        head = ("kernel", "line", "array", "space", "op", "requests", "sectors/req",
                "ideal", "eff", "ways", "max")
        table = [head]
        for r in rows:
            where = f"{r.filename.rsplit('/', 1)[-1]}:{r.lineno}"
            if r.space == "global":
                vals = (f"{r.sectors_per_request:.2f}", f"{r.ideal_sectors_per_request:.2f}",
                        f"{r.efficiency:.0%}", "", "")
            else:
                vals = ("", f"{r.ideal_ways:.2f}", "", f"{r.ways:.2f}", str(r.max_ways))
            table.append((r.kernel, where, r.array, r.space, r.op, str(r.requests)) + vals
                         + (("!" if r.flagged else ""),))
        widths = [max(len(row[c]) for row in table) for c in range(len(head))]
        lines = []
        for row in table:
            cells = [row[c].ljust(widths[c]) if c < 5 else row[c].rjust(widths[c])
                     for c in range(len(head))]
            lines.append("  ".join(cells) + ("  " + row[-1] if len(row) > len(head) and
                                             row[-1] else ""))
        warns = self.warnings
        if warns:
            lines.append("")
            lines.append(f"{len(warns)} warning{'s' if len(warns) != 1 else ''}:")
            for r in warns:
                lines.append(f"  {r.kernel} at {r.filename.rsplit('/', 1)[-1]}:{r.lineno} "
                             f"({r.space} {r.op}): {r.source}")
                lines.append(f"    {r.hint}")
        else:
            lines.append("")
            lines.append("no warnings: global accesses coalesced (>= "
                         f"{MIN_EFFICIENCY:.0%} efficiency), shared accesses below "
                         f"{MIN_CONFLICT:.0f}-way bank conflicts")
        return "\n".join(lines)

    def __repr__(self):
        rows = self.rows
        return f"<AccessReport {len(rows)} rows, {len(self.warnings)} warnings>"
