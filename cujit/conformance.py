"""``python -m cujit conformance``: numba-cuda's own test modules, unmodified, on cujit.

Each module of numba-cuda's ``tests/cudapy``, ``tests/cudadrv`` and ``tests/doc_examples``
runs in its own pytest process under the numba alias, with numba-cuda's test infrastructure
taken from the same numba-cuda copy (:mod:`cujit.conformance_harness`), and a per-module
timeout.  The result is per-module counts (passed, failed, errors, skipped), the failure
classes (the exception and its first line, or the numba-cuda module a test module could not
import) and, for the whole run, the share of tests of the user-facing modules that pass.
Modules that test numba's internals (its IR passes, debug-info layout, PTX text patterns,
its compiler's extension API) are listed in :data:`INTERNAL_MODULES` with the reason, and
counted apart; so are the tests of user-facing modules that reach inside numba-cuda's
implementation (:func:`internal_test_reason`: listed in :data:`INTERNAL_TESTS`, or failed on
a harness placeholder or an import of a numba-cuda module that cujit has no equivalent of).  docs/conformance.md has the table of the last measured run.

numba-cuda's test directory is ``--tests DIR`` or ``CUJIT_CONFORMANCE_TESTS``
(``cujit.config.CONFORMANCE_TESTS``): its ``numba/cuda/tests`` folder, from an unpacked wheel,
an sdist or a git checkout of numba-cuda.  The interpreter running this command runs the
modules, so it needs pytest and, for most modules, Numba (numba-cuda's tests import it).
"""
import argparse
import ast
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from .config import config

__all__ = ["SUITES", "FAST_SUBSET", "INTERNAL_MODULES", "INTERNAL_TESTS",
           "internal_test_reason", "CLASS_REASONS", "reason_of", "parse_junit_split",
           "ModuleResult", "discover",
           "count_tests", "parse_junit", "failure_class", "scope_of", "run_module",
           "run_all", "format_result_line", "summarize", "ALL_USER_FACING", "internal_counts",
           "merge_reports", "format_markdown", "add_parser", "cmd_conformance"]

#: numba-cuda's test folders this command runs, in this order.
SUITES = ("cudapy", "cudadrv", "doc_examples")

#: The modules of ``--subset fast`` (CI's subset): quick ones that pass entirely on the
#: simulator, touching launches, array arguments, constant memory, lazy compilation,
#: iterators in kernels and NumPy math.
FAST_SUBSET = (
    "cudapy/test_array_args.py",
    "cudapy/test_blackscholes.py",
    "cudapy/test_boolean.py",
    "cudapy/test_constmem.py",
    "cudapy/test_cuda_jit_no_types.py",
    "cudapy/test_iterators.py",
)

#: numba-cuda test modules that test numba's own implementation rather than behaviour a user
#: of ``numba.cuda`` sees; counted apart from the user-facing modules, each with the reason.
#: Features a user calls (the extension API, cffi, linking CUDA C) are user-facing even where
#: cujit does not have them yet.
INTERNAL_MODULES = {
    "cudapy/test_analysis.py": "numba's IR analysis passes (dead-branch pruning on its IR)",
    "cudapy/test_byteflow.py": "numba's bytecode flow analysis (its byteflow/controlflow "
                               "classes)",
    "cudapy/test_copy_propagate.py": "numba's IR copy-propagation pass",
    "cudapy/test_ir.py": "numba's IR classes (numba.cuda.core.ir)",
    "cudapy/test_ir_utils.py": "numba's IR utilities",
    "cudapy/test_ssa.py": "numba's SSA reconstruction pass on its IR",
    "cudapy/test_typeinfer.py": "numba's type-inference engine objects",
    "cudapy/test_typeconv.py": "numba's type-conversion rules tables (numba.cuda.typeconv)",
    "cudapy/test_make_function_to_jit_function.py": "numba's IR rewrite of closures "
                                                    "(make_function)",
    "cudapy/test_inline.py": "numba's IR inliner (inline='always' is checked on its IR)",
    "cudapy/test_debuginfo.py": "the layout of numba's DWARF debug info in its LLVM IR",
    "cudapy/test_debuginfo_types.py": "the layout of numba's DWARF debug info for types",
    "cudapy/test_lineinfo.py": "line-info directives in numba's PTX text",
    "cudapy/test_optimization.py": "patterns in numba's PTX text at each optimization level",
    "cudapy/test_fastmath.py": "fast-math instruction patterns in numba's PTX text",
    "cudapy/test_inspect.py": "the text of numba's LLVM IR, PTX and SASS (inspect_*)",
    "cudapy/test_compiler.py": "the PTX text compile_ptx makes and numba's calling-convention "
                               "class (numba.cuda.core.callconv)",
    "cudadrv/test_nvvm_driver.py": "numba's libNVVM wrapper objects (numba.cuda.cudadrv.nvvm)",
    "cudadrv/test_linker.py": "numba's linker classes and its PTX/cubin linking internals",
    "cudadrv/test_nvjitlink.py": "numba's nvJitLink wrapper objects",
    "cudadrv/test_nvrtc.py": "numba's NVRTC wrapper objects",
    "cudadrv/test_inline_ptx.py": "numba's llvmlite inline-asm lowering (a numba internal "
                                  "API)",
    "cudapy/test_gufunc_scheduling.py": "numba's gufunc loop scheduler object "
                                        "(numba.cuda.deviceufunc.GUFuncEngine, not exported "
                                        "by numba.cuda)",
    "cudapy/test_tracing.py": "numba's call-tracing logger (numba.cuda.core.tracing, a "
                              "debugging helper of its compiler, not exported by numba.cuda)",
    "cudapy/test_extending_types.py": "extension types through numba's lowering registry "
                                      "(numba.cuda.core.imputils) and data models",
    "cudapy/test_launch_config_sensitive.py": "numba's IR rewrite passes "
                                              "(numba.cuda.core.rewrites) marking kernels "
                                              "whose compilation sees the launch "
                                              "configuration",
}


#: Tests of user-facing modules that test numba-cuda's implementation rather than behaviour a
#: user of ``numba.cuda`` sees: ``{module: {selector: reason}}``, a selector being a test class
#: (``"TestCFGraph"``: all its tests) or ``"Class.test_name"``.  Counted with the internals,
#: pass or fail (``internal_tests`` of the module's result).
_TYPE_ANNOTATION = ("checks the array's type through numba's `_type_annotation` of its "
                    "compile result (cujit's tests check the same dtypes by value)")
INTERNAL_TESTS = {
    "cudapy/test_flow_control.py": {
        "TestCFGraph": "numba's control-flow graph class (numba.cuda.core.controlflow.CFGraph)",
        "TestRealCodeDomFront": "dominance frontiers of numba's bytecode CFG "
                                "(ControlFlowAnalysis, ByteCode)",
    },
    "cudapy/test_localmem.py": {
        "TestCudaLocalMem.test_numba_dtype": _TYPE_ANNOTATION,
        "TestCudaLocalMem.test_numpy_dtype": _TYPE_ANNOTATION,
        "TestCudaLocalMem.test_string_dtype": _TYPE_ANNOTATION,
        "TestCudaLocalMem.test_type_with_struct_data_model":
            "a local array of a type registered through numba's data-model API "
            "(models.StructModel)",
    },
    "cudapy/test_sm_creation.py": {
        "TestSharedMemoryCreation.test_numba_dtype": _TYPE_ANNOTATION,
        "TestSharedMemoryCreation.test_numpy_dtype": _TYPE_ANNOTATION,
        "TestSharedMemoryCreation.test_string_dtype": _TYPE_ANNOTATION,
        "TestSharedMemoryCreation.test_type_with_struct_data_model":
            "a shared array of a type registered through numba's data-model API "
            "(models.StructModel)",
    },
    "cudapy/test_dispatcher.py": {
        f"TestDispatcher.{name}": "the launch configuration seen by numba's compilation "
                                  "pipeline through its dispatcher's `_compile_for_args` "
                                  "(numba.cuda.launchconfig)"
        for name in ("test_launch_config_available_during_compile",
                     "test_capture_compile_config",
                     "test_dispatcher_mark_launch_config_sensitive",
                     "test_launch_config_args_are_thread_local")
    },
    "cudapy/test_device_func.py": {
        "TestDeviceFunc.test_inspect_llvm": "numba's compile result of `compile_device` "
                                            "(its `fndesc` and library)",
        "TestDeviceFunc.test_inspect_asm": "numba's compile result of `compile_device` "
                                           "(its `fndesc` and library)",
    },
    "cudapy/test_debug.py": {
        f"TestDebugOutput.test_dump_{what}": f"numba's {label} dump (DUMP_{what.upper()}): "
                                             "cujit compiles from the ast, not numba's IR"
        for what, label in (("bytecode", "bytecode"), ("ir", "IR"), ("cfg", "CFG"))
    },
    "cudapy/test_extending.py": {
        "TestExtending": "an extension type through numba's data-model API (typeof_impl, "
                         "models.StructModel, make_attribute_wrapper, lower_builtin: "
                         "lowered by numba's code generator)",
        "TestExtendingLinkage.test_extension_adds_linkable_code":
            "numba's low-level typing API (type_callable) with lower_builtin",
        "TestLowLevelExtending": "numba's low-level typing API (type_callable)",
        "TestHighLevelExtending.test_overload_method_kwargs":
            "numba's data-model API (overload_method on an extension type)",
        "TestHighLevelExtending.test_overload_method_literal_unpack":
            "numba's data-model API (overload_method on an extension type)",
        "TestIntrinsic.test_serialization": "numba's `_Intrinsic` class and its pickling memo",
        "TestIntrinsic.test_deserialization": "numba's `_Intrinsic` class and its pickling "
                                              "memo",
    },
    "cudapy/test_overload.py": {
        "TestOverload.test_target_overloaded_calls_target_overloaded_cpu":
            "Numba's CPU JIT (@njit) resolving numba's overloads: cujit leaves Numba's CPU "
            "compiler as it is",
        "TestOverload.test_overload_attribute_target":
            "numba's data-model API (overload_attribute on an extension type), and its CPU "
            "JIT",
    },
    "cudapy/test_enums.py": {
        "EnumTest.test_int_enum_no_conversion": "numba's CUDA typing context "
                                                "(numba.cuda.descriptor.cuda_target)",
    },
    "cudapy/test_const_string.py": {
        "TestConstStringCodegen.test_const_string": "numba's CUDA target context and its "
                                                    "code generation of constant strings "
                                                    "(numba.cuda.descriptor.cuda_target)",
    },
}


def internal_test_reason(module, test_id, failure_class=None):
    """Why the test ``test_id`` (``"Class.test_name"``, or ``"test_name"`` for a module-level
    function) of the user-facing ``module`` counts with the internals, or None when it does
    not: a selector of :data:`INTERNAL_TESTS` matches it, or its ``failure_class`` (None for
    a test that passed or was skipped) shows that it reached numba-cuda's implementation — a
    harness placeholder was used (``"numba internal: ..."``) or a numba-cuda module that cujit
    has no equivalent of was imported (``"imports numba.cuda...."``)."""
    for selector, reason in INTERNAL_TESTS.get(module, {}).items():
        if test_id == selector or test_id.startswith(selector + "."):
            return reason
    if failure_class and failure_class.startswith("numba internal: "):
        return "uses " + failure_class[len("numba internal: "):] + ", a numba-cuda internal"
    if failure_class and failure_class.startswith("imports numba.cuda."):
        return "imports " + failure_class[len("imports "):] + ", a part of numba-cuda's " \
               "implementation"
    return None

#: What each failure class means: ``(substrings, category, reason)``, the first entry with a
#: substring in the class wins (:func:`reason_of`).  Categories: "numba internals" (out of
#: scope), "feature not yet built" (user-facing, planned), "name missing in cujit" (a name of
#: a module the alias maps), "environment" (a package or a file this machine lacks), and the
#: default "differs from numba-cuda" (to fix or document).
CLASS_REASONS = (
    (("timeout after",), "environment",
     "the module ran past its per-module timeout on this machine (raise --timeout)"),
    (("bfloat16", "ml_dtypes", ".bf16"), "feature not yet built",
     "bfloat16 (cuda.bf16, numba.cuda.types.bfloat16) is not in cujit yet"),
    (("fp8",), "feature not yet built",
     "FP8 beyond the storage types and cvt_* bindings (the fp8x2 / fp8x4 pair types) is not "
     "in cujit yet"),
    (("vector_types", "float32x", "int32x", "float4", "int2"), "feature not yet built",
     "CUDA vector types (float32x4, int2...) are not in cujit yet"),
    (("CUSource", "LinkableCode", "linkable_code", "PTXSource", "_Linker", "link="),
     "feature not yet built",
     "linking CUDA C/C++, PTX or LTO-IR into kernels (jit(link=...), CUSource) is not in "
     "cujit yet"),
    (("CPointer", "cffi"), "feature not yet built",
     "C pointers and cffi functions in kernels are not in cujit yet"),
    # the last: numba-cuda's extensions_usecases subclass numba.cuda.types.Type with a name,
    # and cujit's Type takes none
    (("extending", "overload", "intrinsic", "numba internal: numba.cuda.core.pythonapi",
      "numba internal: numba.cuda.datamodel",
      "TypeError: object.__init__() takes exactly one argument"), "feature not yet built",
     "numba's extension API (@overload, @intrinsic, typeof_impl, data models) is not in "
     "cujit yet"),
    (("CUDA_ENABLE_NRT", "nrt.rtsys"), "feature not yet built",
     "numba's runtime (NRT: arrays allocated inside kernels, its allocation statistics) is "
     "not in cujit"),
    (("launchconfig",), "feature not yet built",
     "numba-cuda 0.30's launch-configuration API (numba.cuda.launchconfig) is not in cujit "
     "yet"),
    (("cannot read the source of", "'-c', 'from numba import cuda"), "feature not yet built",
     "kernels defined without a source file (made with exec(), or run with python -c) are "
     "not compiled by cujit yet"),
    (("must be a compile-time constant",), "feature not yet built",
     "arguments of a device function that are literals at its call site are not constants "
     "inside it (numba types them as literals, so they can be array shapes)"),
    (("recursive call of device function",), "feature not yet built",
     "recursive device functions are not in cujit yet"),
    (("imports numba.cuda.",), "numba internals",
     "the module imports a part of numba-cuda's implementation (its compiler, IR, typing or "
     "driver wrappers) that cujit has no equivalent of, so none of its tests run"),
    (("cujit.config has no setting",), "name missing in cujit",
     "a numba setting (numba.cuda.config.X) that cujit does not have"),
    (("imports cujit.", "AttributeError: module 'cujit"), "name missing in cujit",
     "a name of a numba.cuda module that cujit provides (cujit.X is numba.cuda.X under the "
     "alias) is not there yet: a driver-level function, a devicearray helper or a submodule"),
    (("numba internal:",), "numba internals",
     "the test uses a numba-cuda internal that the harness stands in for with a placeholder"),
    (("imports cupy", "imports cuda.core", "imports scipy", "imports ml_dtypes"),
     "environment", "an optional package numba-cuda's tests use is not installed"),
    (("(ufunc <ufunc",), "feature not yet built",
     "NumPy ufuncs beyond numba-cuda's list (np.add, np.modf ...) are not in cujit's kernel "
     "language yet"),
    (("dtype |S", "dtype <U", "datetime64", "timedelta64"), "feature not yet built",
     "datetime64 and timedelta64 arrays, and string operations beyond storing constants, "
     "are not in cujit's kernels yet"),
)


def reason_of(failure_class):
    """``(category, reason)`` of a failure class from :data:`CLASS_REASONS`;
    ``("differs from numba-cuda", ...)`` when no entry matches."""
    for subs, category, reason in CLASS_REASONS:
        if any(sub in failure_class for sub in subs):
            return category, reason
    return ("differs from numba-cuda",
            "cujit's behaviour differs from numba-cuda's here: a defect to fix or a "
            "difference to document")


class ModuleResult(dict):
    """One module's result: ``module`` (path under the test folder, e.g.
    ``cudapy/test_array.py``), ``scope`` ('user-facing' or 'internals'), ``passed``,
    ``failed``, ``errors``, ``skipped`` (ints), ``seconds`` (float), ``collected`` (False
    when the module could not be imported: then ``errors`` is its number of test functions)
    and ``classes`` (``{failure class: count}``).  A dict, so it is JSON as it is."""


def discover(tests_dir, suites=SUITES):
    """The test modules (``test_*.py``) of ``suites`` under ``tests_dir``, as sorted paths
    relative to it (``'cudapy/test_array.py'``).

    Raises ValueError when ``tests_dir`` is not numba-cuda's ``numba/cuda/tests`` folder (no
    ``__init__.py`` in it or no ``testing.py`` beside it) or a suite folder is missing.
    """
    tests_dir = os.path.abspath(tests_dir)
    if not os.path.isfile(os.path.join(tests_dir, "__init__.py")) or \
            not os.path.isfile(os.path.join(os.path.dirname(tests_dir), "testing.py")):
        raise ValueError(f"{tests_dir!r} is not numba-cuda's numba/cuda/tests folder "
                         "(expected an __init__.py in it and a testing.py beside it)")
    out = []
    for suite in suites:
        folder = os.path.join(tests_dir, suite)
        if not os.path.isdir(folder):
            raise ValueError(f"{tests_dir!r} has no {suite!r} folder")
        out += [f"{suite}/{name}" for name in sorted(os.listdir(folder))
                if name.startswith("test_") and name.endswith(".py")]
    return out


def count_tests(path):
    """How many test functions the module at ``path`` defines: ``test*`` methods of its
    classes and its top-level ``test*`` functions (what pytest would collect, before
    parametrisation).  Used for a module that cannot be imported.  0 for a file that does not
    parse."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
    except (SyntaxError, OSError, UnicodeDecodeError):
        return 0
    n = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith("test"):
            n += 1
        elif isinstance(node, ast.ClassDef):
            n += sum(1 for b in node.body if isinstance(b, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef))
                     and b.name.startswith("test"))
    return n


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|"
                             r"Failure|NotFound)\b")


def _last_error_line(text):
    """The exception line of a pytest traceback: the last ``E   `` line that starts with an
    exception's name (a TypingError's source excerpt follows it), else the last ``E`` line,
    else the last line."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    errs = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    named = [e for e in errs if _EXCEPTION_LINE.match(e)]
    if named:
        return named[-1]
    if errs:
        return errs[-1]
    return lines[-1].strip() if lines else ""


def failure_class(text):
    """The failure class of one failed or errored test, from its message or traceback
    ``text``: ``"imports numba.cuda.X"`` when a module of numba-cuda that the alias does not
    map was imported (``"imports MODULE.NAME"`` for a name missing from a module that
    exists), ``"numba internal: NAME"`` for a harness placeholder that was used, and
    otherwise ``"ExceptionType: first line"`` cut to 160 characters."""
    line = _last_error_line(text)
    marker = "No module named '"
    if "ModuleNotFoundError" in line and marker in line:
        name = line.split(marker, 1)[1].split("'", 1)[0]
        return f"imports {name}"
    if "is a numba-cuda internal" in line:
        name = line.split(": ", 1)[-1].split(" is a numba-cuda internal", 1)[0]
        return f"numba internal: {name}"
    marker = "ImportError: cannot import name '"
    if line.startswith(marker):
        name, _, rest = line[len(marker):].partition("' from '")
        module = rest.split("'", 1)[0]
        return f"imports {module}.{name}" if module else line[:160]
    return line[:160]


def _junit_cases(xml_text):
    """``[(test_id, outcome, failure class or None, collection_error)]`` of pytest's JUnit XML;
    outcome is 'passed', 'failed', 'errors' or 'skipped'; test_id is ``"Class.name"`` (the
    last part of the case's classname and its name).  ValueError for text that is not JUnit
    XML."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"not JUnit XML: {exc}") from None
    cases = []
    for case in root.iter("testcase"):
        kinds = {child.tag: child for child in case}
        owner = (case.get("classname") or "").rsplit(".", 1)[-1]
        name = case.get("name") or ""
        test_id = f"{owner}.{name}" if owner and owner[:1].isupper() else name
        if "failure" in kinds or "error" in kinds:
            node = kinds.get("failure", kinds.get("error"))
            collection = "error" in kinds and (node.get("message") or "").startswith(
                "collection failure")
            cls = failure_class(node.text or node.get("message") or "")
            cases.append((test_id, "failed" if "failure" in kinds else "errors", cls,
                          collection))
        elif "skipped" in kinds:
            cases.append((test_id, "skipped", None, False))
        else:
            cases.append((test_id, "passed", None, False))
    return cases


def _counts():
    return {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "classes": {}}


def _add_case(counts, outcome, cls):
    counts[outcome] += 1
    if cls is not None:
        counts["classes"][cls] = counts["classes"].get(cls, 0) + 1


def parse_junit(xml_text):
    """``(passed, failed, errors, skipped, classes, collected)`` from pytest's JUnit XML
    (``--junitxml``).  ``classes`` counts :func:`failure_class` of each failure and error;
    ``collected`` is False when a collection error was reported (the module did not
    import).  Raises ValueError for text that is not JUnit XML."""
    counts = _counts()
    collected = True
    for _, outcome, cls, collection in _junit_cases(xml_text):
        _add_case(counts, outcome, cls)
        collected = collected and not collection
    return (counts["passed"], counts["failed"], counts["errors"], counts["skipped"],
            counts["classes"], collected)


def parse_junit_split(xml_text, module):
    """``(counts, internal_counts, collected)`` from pytest's JUnit XML of ``module``: each
    counts dict has ``passed``, ``failed``, ``errors``, ``skipped`` and ``classes``;
    ``internal_counts`` holds the tests that :func:`internal_test_reason` counts with the
    internals (none for a module of :data:`INTERNAL_MODULES`, whose tests are all internal),
    ``counts`` the others.  ValueError for text that is not JUnit XML."""
    counts, internal = _counts(), _counts()
    collected = True
    user_facing = scope_of(module) == "user-facing"
    for test_id, outcome, cls, collection in _junit_cases(xml_text):
        collected = collected and not collection
        into = internal if user_facing and not collection and \
            internal_test_reason(module, test_id, cls) else counts
        _add_case(into, outcome, cls)
    return counts, internal, collected


def scope_of(module):
    """'internals' for a module in :data:`INTERNAL_MODULES`, else 'user-facing'."""
    return "internals" if module in INTERNAL_MODULES else "user-facing"


def _child_env(tests_dir, sim):
    env = config.environment()
    env["CUJIT_CONFORMANCE_TESTS"] = os.path.abspath(tests_dir)
    if sim:
        env["CUJIT_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("CUJIT_ENABLE_CUDASIM", None)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env


def run_module(tests_dir, module, sim, timeout, python=None):
    """Run one numba-cuda test module (``module`` as :func:`discover` gives it) in a pytest
    process of ``python`` (default: this interpreter) under
    :mod:`cujit.conformance_harness`, on the simulator when ``sim``; kill it after
    ``timeout`` seconds.  Returns a :class:`ModuleResult`.  A module that times out, or ends
    without a report, counts its :func:`count_tests` functions as errors of class
    ``"timeout after N s"`` or ``"no report: ..."``."""
    tests_dir = os.path.abspath(tests_dir)
    path = os.path.join(tests_dir, module)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cujit-conformance-") as tmp:
        xml_path = os.path.join(tmp, "report.xml")
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as f:
            # numba-cuda's own pytest.ini sets this: ``numba`` is a namespace package in it
            f.write("[pytest]\nconsider_namespace_packages = true\n")
        cmd = [python or sys.executable, "-m", "pytest", "-p", "cujit.conformance_harness",
               "-p", "no:cacheprovider", "-q", "-c", ini, "--rootdir", tests_dir,
               "--junitxml", xml_path, "-o", "junit_logging=no", path]
        try:
            proc = subprocess.run(cmd, env=_child_env(tests_dir, sim), cwd=tmp,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=timeout, text=True, errors="replace")
            output = proc.stdout
            timed_out = False
        except subprocess.TimeoutExpired as exc:
            output = exc.stdout if isinstance(exc.stdout, str) else ""
            timed_out = True
        report = None
        if not timed_out and os.path.isfile(xml_path):
            with open(xml_path, encoding="utf-8", errors="replace") as f:
                report = f.read()
    seconds = round(time.monotonic() - start, 1)
    result = ModuleResult(module=module, scope=scope_of(module), seconds=seconds,
                          internal_tests=_counts())
    if report is not None:
        try:
            counts, internal, collected = parse_junit_split(report, module)
        except ValueError:
            report = None
    if report is None:
        n = max(count_tests(path), 1)
        why = (f"timeout after {timeout:g} s" if timed_out else
               "no report: " + (_last_error_line(output) or "the process wrote nothing")[:140])
        result.update(passed=0, failed=0, errors=n, skipped=0, collected=False,
                      classes={why: n})
        return result
    classes = counts["classes"]
    errors = counts["errors"]
    if not collected:
        # one collection error stands for every test function of the module
        n = max(count_tests(path), 1)
        errors = errors - 1 + n
        cls = next(iter(classes))
        classes = {cls: n} if len(classes) == 1 else dict(classes, **{cls: classes[cls] - 1 + n})
    result.update(passed=counts["passed"], failed=counts["failed"], errors=errors,
                  skipped=counts["skipped"], collected=collected, classes=classes,
                  internal_tests=internal)
    return result


def run_all(tests_dir, modules, sim, timeout, jobs=1, python=None, on_result=None):
    """:func:`run_module` for each of ``modules``, ``jobs`` at a time; ``on_result(result)``
    (if given) is called with each :class:`ModuleResult` as its module finishes.  Returns the
    results in the order of ``modules``.  ValueError for ``jobs < 1`` or ``timeout <= 0``."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_module, tests_dir, m, sim, timeout, python)
                   for m in modules]
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            results[r["module"]] = r
            if on_result is not None:
                on_result(r)
    return [results[m] for m in modules]


def format_result_line(r):
    """One module's counts on one line (what the command prints as each module finishes);
    its tests counted with the internals are added as ``(+N internal)``."""
    inner = internal_counts(r)
    n = sum(inner[k] for k in _OUTCOMES)
    extra = f" (+{n} internal: {inner['passed']} passed)" if n and "internal_tests" in r else ""
    return (f"{r['module']:<52} {r['passed']:>4} passed {r['failed']:>3} failed "
            f"{r['errors']:>3} errors {r['skipped']:>3} skipped{extra}  ({r['seconds']} s)")


#: The key of :func:`summarize`'s totals over every test of the user-facing modules, their
#: internal tests included.
ALL_USER_FACING = "user-facing modules, all tests"
_OUTCOMES = ("passed", "failed", "errors", "skipped")


def internal_counts(result):
    """The ``internal_tests`` counts of a module's result; a report written before they
    existed has none, so they are derived from its failure classes (a class that
    :func:`internal_test_reason` counts as internal, counted as failed, or as errors for a
    module that did not import)."""
    got = result.get("internal_tests")
    if got is not None:
        return got
    counts = _counts()
    if result.get("scope") != "user-facing":
        return counts
    kind = "failed" if result.get("collected", True) else "errors"
    for cls, n in result.get("classes", {}).items():
        if internal_test_reason(result["module"], "", cls):
            counts[kind] += n
            counts["classes"][cls] = n
    return counts


def _own_counts(result):
    """The module's counts without the tests :func:`internal_counts` takes out."""
    if result.get("internal_tests") is not None:
        return {k: result[k] for k in _OUTCOMES}
    inner = internal_counts(result)
    return {k: result[k] - inner[k] for k in _OUTCOMES}


def summarize(results):
    """Totals per scope: ``{scope: {passed, failed, errors, skipped, modules, pass_percent}}``
    where ``pass_percent`` is passed / (passed + failed + errors) in percent (skipped tests
    are not counted; None when nothing ran).  'user-facing' counts the tests of the
    user-facing modules except their internal tests (:func:`internal_test_reason`), which
    'internals' counts with the modules of :data:`INTERNAL_MODULES`; ``ALL_USER_FACING``
    counts every test of the user-facing modules."""
    totals = {scope: dict.fromkeys(_OUTCOMES, 0) for scope in ("user-facing", "internals",
                                                                ALL_USER_FACING)}
    modules = {"user-facing": 0, "internals": 0}
    for r in results:
        modules[r["scope"]] += 1
        own = _own_counts(r)
        inner = internal_counts(r)
        for k in _OUTCOMES:
            totals[r["scope"]][k] += own[k]
            totals["internals"][k] += inner[k]
            if r["scope"] == "user-facing":
                totals[ALL_USER_FACING][k] += own[k] + inner[k]
    modules[ALL_USER_FACING] = modules["user-facing"]
    for scope, t in totals.items():
        t["modules"] = modules[scope]
        ran = t["passed"] + t["failed"] + t["errors"]
        t["pass_percent"] = round(100.0 * t["passed"] / ran, 1) if ran else None
    return totals


def _classes_by_total(results, internal=False):
    """``(sorted [(class, count)], {class: [modules]})`` of the failure classes of the
    modules' own tests, or with ``internal`` of their tests counted with the internals."""
    total = {}
    where = {}
    for r in results:
        if internal:
            classes = internal_counts(r)["classes"]
        elif "internal_tests" in r:
            classes = r["classes"]
        else:       # an older report: its classes hold the internal tests' too
            inner = internal_counts(r)["classes"]
            classes = {c: n for c, n in r["classes"].items() if c not in inner}
        for cls, n in classes.items():
            total[cls] = total.get(cls, 0) + n
            where.setdefault(cls, []).append(r["module"])
    return sorted(total.items(), key=lambda kv: (-kv[1], kv[0])), where


_MD_ACTIVE = str.maketrans({c: "\\" + c for c in "\\`*_[]<>"} | {"|": "/"})


def _md_text(text):
    """``text`` (a failure class: any characters) as literal text of a markdown table cell:
    a test's message may hold ``[^>]``, ``*`` or ``<...>``, which markdown would read."""
    return text.translate(_MD_ACTIVE)


def format_markdown(results, backend, date=None, meta=None):
    """The markdown table of a run: one row per module (scope, counts, seconds), the totals
    per scope with the user-facing pass share, then every failure class with its count and
    modules.  ``backend`` names the column ('simulator' or the GPU); ``meta`` is a dict of
    extra ``key: value`` lines (versions)."""
    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    L = [f"Run of {date} on {backend}."]
    for k, v in (meta or {}).items():
        L.append(f"- {k}: {v}")
    L += ["", "| module | scope | passed | failed | errors | skipped | internal tests "
              "(passed / ran) | seconds |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        mark = "" if r.get("collected", True) else " (not imported)"
        own, inner = _own_counts(r), internal_counts(r)
        ran = inner["passed"] + inner["failed"] + inner["errors"]
        cell = f"{inner['passed']} / {ran}" if ran else ""
        L.append(f"| {r['module']}{mark} | {r['scope']} | {own['passed']} | {own['failed']} | "
                 f"{own['errors']} | {own['skipped']} | {cell} | {r['seconds']} |")
    s = summarize(results)
    for scope, t in s.items():
        pct = "n/a" if t["pass_percent"] is None else f"{t['pass_percent']}%"
        L.append(f"| **{scope} total** ({t['modules']} modules) | | **{t['passed']}** | "
                 f"**{t['failed']}** | **{t['errors']}** | **{t['skipped']}** | | |")
        L.append(f"| {scope}: passed / (passed + failed + errors) | | {pct} | | | | | |")
    ordered, where = _classes_by_total(results)
    by_category = {}
    for cls, n in ordered:
        category, reason = reason_of(cls)
        c = by_category.setdefault(category, [0, set()])
        c[0] += n
        c[1].add(reason)
    L += ["", "| category | tests | reasons |", "|---|---:|---|"]
    for category, (n, reasons) in sorted(by_category.items(), key=lambda kv: -kv[1][0]):
        L.append(f"| {category} | {n} | {'; '.join(sorted(reasons))} |")
    L += ["", "| failure class | tests | category | modules |", "|---|---:|---|---|"]
    for cls, n in ordered:
        mods = ", ".join(sorted(set(where[cls])))
        L.append(f"| {_md_text(cls)} | {n} | {reason_of(cls)[0]} | {mods} |")
    ordered, where = _classes_by_total(results, internal=True)
    if ordered:
        L += ["", "Failure classes of the user-facing modules' tests counted with the internals "
                  "(:data:`INTERNAL_TESTS` or a numba-cuda internal reached):", "",
              "| failure class | tests | modules |", "|---|---:|---|"]
        for cls, n in ordered:
            mods = ", ".join(sorted(set(where[cls])))
            L.append(f"| {_md_text(cls)} | {n} | {mods} |")
    return "\n".join(L) + "\n"


def add_parser(sub):
    """The ``conformance`` subcommand on argparse subparsers ``sub``."""
    c = sub.add_parser("conformance", help="run numba-cuda's own test modules on cujit and "
                                           "write per-module counts (docs/conformance.md)")
    c.add_argument("--sim", action="store_true", help="run on the simulator")
    c.add_argument("--tests", metavar="DIR",
                   help="numba-cuda's numba/cuda/tests folder (default: "
                        "$CUJIT_CONFORMANCE_TESTS)")
    c.add_argument("--subset", choices=("fast", "all"), default="all",
                   help="fast: the few modules CI runs; all (default): every module of "
                        + ", ".join(SUITES))
    c.add_argument("--modules", nargs="+", metavar="MODULE",
                   help="run only these modules (paths like cudapy/test_array.py)")
    c.add_argument("--timeout", type=float, default=600.0,
                   help="seconds one module may run (default 600)")
    c.add_argument("--jobs", type=int, default=1, help="modules run at once (default 1)")
    c.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    c.add_argument("--markdown", metavar="OUT", help="write the markdown table to OUT")
    c.add_argument("--from-json", nargs="+", metavar="REPORT",
                   help="run nothing: merge these --json reports (a module in a later one "
                        "replaces it in an earlier one; scopes re-read from the current "
                        "table) and write --json/--markdown from them")
    return c


def merge_reports(docs):
    """One report from several ``--json`` documents (dicts) of the same backend: a module of
    a later document replaces it in an earlier one, each module's scope is re-read with
    :func:`scope_of`, the date is the latest.  Raises ValueError for an empty list, documents
    of different backends or a document without ``modules``."""
    if not docs:
        raise ValueError("no reports to merge")
    backends = {d.get("backend") for d in docs}
    if len(backends) != 1:
        raise ValueError(f"reports of different backends cannot be merged: {sorted(map(str, backends))}")
    modules = {}
    for d in docs:
        if "modules" not in d:
            raise ValueError("a report without 'modules' (not written by --json)")
        for r in d["modules"]:
            modules[r["module"]] = ModuleResult(r, scope=scope_of(r["module"]))
    results = sorted(modules.values(), key=lambda r: (SUITES.index(r["module"].split("/")[0])
                                                      if r["module"].split("/")[0] in SUITES
                                                      else len(SUITES), r["module"]))
    return {"date": max(d.get("date", "") for d in docs), "backend": backends.pop(),
            "complete": all(d.get("complete", False) for d in docs), "modules": results,
            "totals": summarize(results)}


def _cmd_from_json(args):
    try:
        docs = []
        for path in args.from_json:
            with open(path) as f:
                docs.append(json.load(f))
        doc = merge_reports(docs)
    except (OSError, ValueError) as exc:
        print(f"python -m cujit conformance: {exc}", file=sys.stderr)
        return 2
    backend = "the simulator" if doc["backend"] == "simulator" else "the GPU"
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(format_markdown(doc["modules"], backend, doc["date"]))
    for scope, t in doc["totals"].items():
        print(f"{scope}: {t['modules']} modules, {t['passed']} passed; pass share "
              f"{t['pass_percent']}%")
    return 0


def cmd_conformance(args):
    """``python -m cujit conformance``: returns 0 after a run (whatever the counts), 2 for
    bad arguments (no test folder, an unknown module, a bad ``--jobs`` or ``--timeout``, an
    unreadable ``--from-json`` report)."""
    if args.from_json:
        return _cmd_from_json(args)
    tests_dir = args.tests or config.CONFORMANCE_TESTS
    err = sys.stderr
    if not tests_dir:
        print("python -m cujit conformance: give numba-cuda's numba/cuda/tests folder with "
              "--tests DIR or CUJIT_CONFORMANCE_TESTS", file=err)
        return 2
    try:
        modules = discover(tests_dir)
    except ValueError as exc:
        print(f"python -m cujit conformance: {exc}", file=err)
        return 2
    if args.modules:
        unknown = [m for m in args.modules if m not in modules]
        if unknown:
            print(f"python -m cujit conformance: no such test module(s) {unknown} under "
                  f"{tests_dir!r}", file=err)
            return 2
        modules = list(args.modules)
    elif args.subset == "fast":
        modules = [m for m in FAST_SUBSET if m in modules]
    if args.jobs < 1 or not args.timeout > 0:
        print(f"python -m cujit conformance: --jobs must be >= 1 and --timeout > 0 "
              f"(got {args.jobs}, {args.timeout})", file=err)
        return 2
    backend = "the simulator" if args.sim else "the GPU"
    print(f"cujit conformance: {len(modules)} numba-cuda test modules from {tests_dir} on "
          f"{backend}", flush=True)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    done = []

    def write_json(results, complete):
        if not args.json:
            return
        doc = {"date": date, "backend": "simulator" if args.sim else "gpu",
               "tests": os.path.abspath(tests_dir), "complete": complete,
               "modules": results, "totals": summarize(results)}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")

    def on_result(r):
        print(format_result_line(r), flush=True)
        done.append(r)
        # a long run (hours on a GPU) that is stopped still leaves the modules it finished
        write_json(done, complete=False)

    results = run_all(tests_dir, modules, args.sim, args.timeout, args.jobs,
                      on_result=on_result)
    for scope, t in summarize(results).items():
        print(f"{scope}: {t['modules']} modules, {t['passed']} passed, {t['failed']} failed, "
              f"{t['errors']} errors, {t['skipped']} skipped; pass share "
              f"{t['pass_percent']}%")
    write_json(results, complete=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(format_markdown(results, backend, date))
    return 0
