"""Source-line debug information in the NVVM IR, for ``lineinfo=True`` (``.loc`` directives in
the PTX, which profilers and ``compute-sanitizer`` map back to Python lines) and
``debug=True`` (the same, emitted as full debug info).

Each lowered function gets a ``DISubprogram``; every statement sets the builder's
``debug_metadata`` to a ``DILocation`` of its line and column, so every instruction it emits
carries ``!dbg`` (LLVM requires a location on calls between functions with debug info).
The compile unit's language is DW_LANG_Python, as numba-cuda's.
"""
import os

from llvmlite import ir

__all__ = ["DebugInfo"]


class DebugInfo:
    """Debug metadata of one module (``full``: FullDebug, else DebugDirectivesOnly: the
    ``.loc``/``.file`` directives only, no DWARF sections, as numba-cuda's ``lineinfo``; it
    is also what makes libNVVM write ``inlined_at`` for the code of inlined device
    functions, which LineTablesOnly does not)."""

    def __init__(self, module, filename, full):
        self.module = module
        self.full = full
        self._files = {}
        self._scopes = {}
        self._locs = {}
        self.cu = None
        self._first_file = filename

    def _file(self, filename):
        f = self._files.get(filename)
        if f is None:
            path = os.path.abspath(filename) if filename else "<unknown>"
            f = self.module.add_debug_info("DIFile", {
                "filename": os.path.basename(path), "directory": os.path.dirname(path)})
            self._files[filename] = f
        return f

    def _unit(self):
        if self.cu is None:
            m = self.module
            self.cu = m.add_debug_info("DICompileUnit", {
                "language": ir.DIToken("DW_LANG_Python"),
                "file": self._file(self._first_file),
                "producer": "cujit",
                "runtimeVersion": 0,
                "isOptimized": True,
                "emissionKind": ir.DIToken("FullDebug" if self.full else "DebugDirectivesOnly"),
            }, is_distinct=True)
            m.add_named_metadata("llvm.dbg.cu", self.cu)
            m.add_named_metadata("llvm.module.flags",
                                 [ir.Constant(ir.IntType(32), 2), "Dwarf Version",
                                  ir.Constant(ir.IntType(32), 4)])
            m.add_named_metadata("llvm.module.flags",
                                 [ir.Constant(ir.IntType(32), 2), "Debug Info Version",
                                  ir.Constant(ir.IntType(32), 3)])
        return self.cu

    def enter(self, lw):
        """Attach a DISubprogram to ``lw.func`` (a FunctionLowerer's function)."""
        fsrc = lw.tf.fsrc
        unit = self._unit()
        file = self._file(fsrc.filename)
        line = fsrc.location(fsrc.node).line
        stype = self.module.add_debug_info("DISubroutineType", {
            "types": self.module.add_metadata([])})
        sp = self.module.add_debug_info("DISubprogram", {
            "name": fsrc.qualname, "linkageName": lw.func.name, "scope": file, "file": file,
            "line": line, "type": stype, "isLocal": lw.func.linkage == "internal",
            "isDefinition": True, "scopeLine": line, "isOptimized": True, "unit": unit,
        }, is_distinct=True)
        lw.func.set_metadata("dbg", sp)
        self._scopes[id(lw)] = sp
        self.at(lw, fsrc.node)

    def at(self, lw, node):
        """Make ``node``'s line the location of what ``lw`` emits next."""
        sp = self._scopes.get(id(lw))
        if sp is None:
            return
        loc = lw.tf.fsrc.location(node)
        key = (id(sp), loc.line, loc.col)
        md = self._locs.get(key)
        if md is None:
            md = self.module.add_debug_info("DILocation", {
                "line": loc.line, "column": loc.col + 1, "scope": sp})
            self._locs[key] = md
        lw.b.debug_metadata = md
