"""``python -m cujit conformance`` (cujit/conformance.py, cujit/conformance_harness.py): numba-cuda's
own test modules run on cujit, one pytest process each, and are counted and classified.

Most tests use a small fake numba-cuda test folder (a stub ``numba/cuda/testing.py`` and two
suites of unittest modules), so they run in CI without numba-cuda or Numba.  The last test
runs the fast subset of the real numba-cuda 0.30.4 tests when ``CUJIT_CONFORMANCE_TESTS``
names them and Numba is installed (docs/conformance.md says how to get them).
"""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cujit
from cujit import conformance
from cujit.conformance_harness import Internal, HarnessFinder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TESTING_STUB = '''
import unittest
from numba.cuda import config

class CUDATestCase(unittest.TestCase):
    pass

def skip_on_cudasim(reason):
    return unittest.skipIf(config.ENABLE_CUDASIM, reason)
'''

MODULE_MIXED = '''
import numpy as np
from numba import cuda
from numba.cuda.testing import CUDATestCase, skip_on_cudasim
from numba.cuda.tests.cudapy.helpers import SCALE


@cuda.jit
def scale(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= SCALE


class TestMixed(CUDATestCase):
    def test_kernel_scales(self):
        a = np.arange(4, dtype=np.float32)
        scale[1, 4](a)
        np.testing.assert_array_equal(a, np.arange(4, dtype=np.float32) * 3)

    def test_wrong_expectation(self):
        self.assertEqual(cuda.grid.__name__, "not-its-name")

    @skip_on_cudasim("needs hardware")
    def test_hardware_only(self):
        pass
'''

MODULE_INTERNAL = '''
from numba.cuda.core.ir import Loc
from numba.cuda.testing import CUDATestCase


class TestIR(CUDATestCase):
    def test_one(self):
        pass

    def test_two(self):
        pass
'''

MODULE_USES_INTERNAL = '''
from numba.cuda.testing import CUDATestCase
from numba.cuda.extending import overload_method


class TestPlaceholder(CUDATestCase):
    def test_register(self):
        overload_method(int, "bit_length")
'''

MODULE_SLEEPS = '''
import time
time.sleep(600)

def test_never():
    pass
'''


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


@pytest.fixture
def fake_tests(tmp_path):
    """A numba-cuda-shaped folder: ``numba/cuda/testing.py`` (a stub) and ``numba/cuda/tests``
    with the three suites; returns the ``tests`` folder."""
    cuda_dir = tmp_path / "numba" / "cuda"
    tests = cuda_dir / "tests"
    _write(str(cuda_dir / "testing.py"), TESTING_STUB)
    _write(str(cuda_dir / "__init__.py"), "raise RuntimeError('numba-cuda itself must not load')\n")
    _write(str(tests / "__init__.py"), "")
    _write(str(tests / "cudapy" / "__init__.py"), "")
    _write(str(tests / "cudapy" / "helpers.py"), "SCALE = 3\n")
    _write(str(tests / "cudapy" / "test_mixed.py"), MODULE_MIXED)
    _write(str(tests / "cudapy" / "test_placeholder.py"), MODULE_USES_INTERNAL)
    _write(str(tests / "cudadrv" / "__init__.py"), "")
    _write(str(tests / "cudadrv" / "test_internal.py"), MODULE_INTERNAL)
    _write(str(tests / "doc_examples" / "__init__.py"), "")
    return str(tests)


# ---- discovery and counting ----------------------------------------------------------------

def test_discover_lists_the_test_modules_of_each_suite(fake_tests):
    assert conformance.discover(fake_tests) == [
        "cudapy/test_mixed.py", "cudapy/test_placeholder.py", "cudadrv/test_internal.py"]


def test_discover_rejects_a_folder_that_is_not_numba_cudas_tests(tmp_path):
    with pytest.raises(ValueError, match="not numba-cuda's numba/cuda/tests"):
        conformance.discover(str(tmp_path))


def test_discover_rejects_a_missing_suite(fake_tests):
    with pytest.raises(ValueError, match="no 'ffi' folder"):
        conformance.discover(fake_tests, suites=("cudapy", "ffi"))


def test_count_tests_counts_methods_and_functions(tmp_path, fake_tests):
    assert conformance.count_tests(os.path.join(fake_tests, "cudapy", "test_mixed.py")) == 3
    bad = tmp_path / "broken.py"
    bad.write_text("def test_(:\n")
    assert conformance.count_tests(str(bad)) == 0


# ---- parsing and classification --------------------------------------------------------------

JUNIT = '''<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="m.T" name="test_a" time="0.1"/>
<testcase classname="m.T" name="test_b" time="0.1"><failure message="AssertionError: 1 != 2">
self = x
E   AssertionError: 1 != 2</failure></testcase>
<testcase classname="m.T" name="test_c" time="0.1"><skipped message="needs hardware"/></testcase>
<testcase classname="m.T" name="test_d" time="0.1"><error message="failed on setup">
E   NotImplementedError: numba.cuda.memory_management.nrt.rtsys is a numba-cuda internal (x)
</error></testcase>
</testsuite></testsuites>'''


def test_parse_junit_counts_each_outcome_and_classes_failures():
    passed, failed, errors, skipped, classes, collected = conformance.parse_junit(JUNIT)
    assert (passed, failed, errors, skipped, collected) == (1, 1, 1, 1, True)
    assert classes == {"AssertionError: 1 != 2": 1,
                       "numba internal: numba.cuda.memory_management.nrt.rtsys": 1}


JUNIT_INTERNALS = '''<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="2" skipped="0" tests="4">
<testcase classname="cudapy.test_flow_control.TestCFGraph" name="test_dominators" time="0.1"/>
<testcase classname="cudapy.test_flow_control.TestCFGraph" name="test_loops" time="0.1">
<failure message="x">E   NotImplementedError: numba.cuda.core.controlflow.CFGraph is a numba-cuda internal (x)</failure></testcase>
<testcase classname="cudapy.test_flow_control.TestFlowControl" name="test_if" time="0.1">
<failure message="x">E   AssertionError: 1 != 2</failure></testcase>
<testcase classname="cudapy.test_flow_control.TestFlowControl" name="test_uses" time="0.1">
<failure message="x">E   ModuleNotFoundError: No module named 'numba.cuda.core.rewrites': x</failure></testcase>
<testcase classname="cudapy.test_flow_control" name="test_function" time="0.1"/>
</testsuite></testsuites>'''


def test_parse_junit_split_counts_listed_tests_and_internal_failures_apart():
    counts, inner, collected = conformance.parse_junit_split(JUNIT_INTERNALS,
                                                             "cudapy/test_flow_control.py")
    assert collected
    # the listed class, pass or fail, and the test that imported a numba-cuda module
    assert (inner["passed"], inner["failed"]) == (1, 2)
    assert inner["classes"] == {"numba internal: numba.cuda.core.controlflow.CFGraph": 1,
                                "imports numba.cuda.core.rewrites": 1}
    assert (counts["passed"], counts["failed"], counts["classes"]) == \
        (1, 1, {"AssertionError: 1 != 2": 1})
    # a module of INTERNAL_MODULES keeps every test as its own (all are internals anyway)
    counts, inner, _ = conformance.parse_junit_split(JUNIT_INTERNALS, "cudapy/test_ir.py")
    assert (counts["passed"], counts["failed"], inner["failed"]) == (2, 3, 0)


def test_internal_test_reason_names_why():
    assert "CFGraph" in conformance.internal_test_reason("cudapy/test_flow_control.py",
                                                         "TestCFGraph.test_loops")
    assert conformance.internal_test_reason("cudapy/test_flow_control.py",
                                            "TestCFGraphX.test_loops") is None
    assert conformance.internal_test_reason("cudapy/test_array.py", "T.test_a") is None
    assert "numba-cuda internal" in conformance.internal_test_reason(
        "cudapy/test_array.py", "T.test_a", "numba internal: numba.cuda.cgutils.pack_array")
    assert conformance.internal_test_reason("cudapy/test_array.py", "T.test_a",
                                            "TypeError: numba internal: x") is None
    for module, selectors in conformance.INTERNAL_TESTS.items():
        assert module not in conformance.INTERNAL_MODULES
        assert all(reason for reason in selectors.values())


def test_summarize_moves_internal_tests_of_user_facing_modules_to_the_internals():
    r = _result("cudapy/test_a.py", "user-facing", 9, 1, 0, 0, {"TypeError: x": 1})
    r["internal_tests"] = {"passed": 1, "failed": 4, "errors": 0, "skipped": 0,
                           "classes": {"numba internal: y": 4}}
    ir = _result("cudapy/test_ir.py", "internals", 0, 0, 5, 0, {"imports numba.cuda.core.ir": 5})
    s = conformance.summarize([r, ir])
    assert s["user-facing"]["pass_percent"] == 90.0
    assert (s["internals"]["passed"], s["internals"]["failed"], s["internals"]["errors"]) == \
        (1, 4, 5)
    assert s[conformance.ALL_USER_FACING]["pass_percent"] == round(100 * 10 / 15, 1)
    md = conformance.format_markdown([r, ir], "the GPU", date="2026-12-02")
    assert "| cudapy/test_a.py | user-facing | 9 | 1 | 0 | 0 | 1 / 5 | 1.0 |" in md
    assert "| numba internal: y | 4 | cudapy/test_a.py |" in md


def test_summarize_derives_internal_tests_of_an_older_report_from_its_classes():
    # written before internal_tests existed: the classes hold every failure of the module
    old = dict(_result("cudapy/test_a.py", "user-facing", 8, 4, 0, 0,
                       {"TypeError: x": 1, "numba internal: y": 2,
                        "imports numba.cuda.core.rewrites": 1}))
    s = conformance.summarize([old])
    assert (s["user-facing"]["passed"], s["user-facing"]["failed"]) == (8, 1)
    assert s["internals"]["failed"] == 3
    assert s[conformance.ALL_USER_FACING]["failed"] == 4
    md = conformance.format_markdown([old], "the GPU", date="2026-12-02")
    assert "| TypeError: x | 1 |" in md and "| numba internal: y | 2 | cudapy/test_a.py |" in md


def test_parse_junit_rejects_text_that_is_not_xml():
    with pytest.raises(ValueError, match="not JUnit XML"):
        conformance.parse_junit("no report")


def test_failure_class_names_the_numba_module_that_is_missing():
    text = ("E   ModuleNotFoundError: No module named 'numba.cuda.core.ir': under cujit's "
            "numba alias numba.cuda is cujit, which has no equivalent of it")
    assert conformance.failure_class(text) == "imports numba.cuda.core.ir"
    assert conformance.failure_class("E   TypeError: bad\nE   more") == "TypeError: bad"
    text = ("E   cujit.frontend.errors.TypingError: recursive call of device function f\n"
            "E   File \"x.py\", line 15, column 1\nE       def f(n):\nE       ^")
    assert conformance.failure_class(text) == \
        "cujit.frontend.errors.TypingError: recursive call of device function f"
    text = "E   ImportError: cannot import name 'carray' from 'numba.cuda.np.numpy_support' (x)"
    assert conformance.failure_class(text) == "imports numba.cuda.np.numpy_support.carray"


def test_reason_of_sorts_classes_into_categories():
    assert conformance.reason_of("imports numba.cuda.core.ir")[0] == "numba internals"
    assert conformance.reason_of("imports ml_dtypes")[0] == "feature not yet built"
    assert conformance.reason_of("timeout after 600 s")[0] == "environment"
    assert conformance.reason_of("TypingError: 'np.less' (ufunc <ufunc 'less'>) cannot be "
                                 "called in a kernel")[0] == "feature not yet built"
    assert conformance.reason_of("imports cujit.cudadrv.driver.device_memset")[0] == \
        "name missing in cujit"
    category, reason = conformance.reason_of("TypeError: bad argument")
    assert category == "differs from numba-cuda" and "defect" in reason


def test_scope_of_reads_the_internal_modules_table():
    assert conformance.scope_of("cudapy/test_ir.py") == "internals"
    assert conformance.INTERNAL_MODULES["cudapy/test_ir.py"]
    assert conformance.scope_of("cudapy/test_array.py") == "user-facing"


def _result(module, scope, passed, failed, errors, skipped, classes):
    return conformance.ModuleResult(module=module, scope=scope, passed=passed, failed=failed,
                                    errors=errors, skipped=skipped, seconds=1.0,
                                    collected=True, classes=classes)


def test_summarize_and_markdown_give_totals_and_classes():
    results = [_result("cudapy/test_a.py", "user-facing", 18, 1, 1, 2, {"TypeError: x": 2}),
               _result("cudapy/test_ir.py", "internals", 0, 0, 5, 0, {"imports numba.cuda.core.ir": 5})]
    s = conformance.summarize(results)
    assert s["user-facing"] == {"passed": 18, "failed": 1, "errors": 1, "skipped": 2,
                                "modules": 1, "pass_percent": 90.0}
    assert s["internals"]["pass_percent"] == 0.0
    md = conformance.format_markdown(results, "the simulator", date="2026-12-01")
    assert md.startswith("Run of 2026-12-01 on the simulator.")
    assert "| cudapy/test_a.py | user-facing | 18 | 1 | 1 | 2 |  | 1.0 |" in md
    assert "| user-facing: passed / (passed + failed + errors) | | 90.0% |" in md
    assert "| imports numba.cuda.core.ir | 5 | numba internals | cudapy/test_ir.py |" in md
    assert "| differs from numba-cuda | 2 |" in md


def test_markdown_shows_failure_classes_as_literal_text():
    # a test's message may hold markdown syntax: [^>] is a footnote to Sphinx's parser
    cls = "AssertionError: Regex didn't match: \"<function f [^>]*> a_b\" | `x`"
    md = conformance.format_markdown(
        [_result("cudapy/test_a.py", "user-facing", 0, 1, 0, 0, {cls: 1})], "the GPU")
    assert ("| AssertionError: Regex didn't match: \"\\<function f \\[^\\>\\]\\*\\> a\\_b\" / "
            "\\`x\\` | 1 |") in md


# ---- the harness -------------------------------------------------------------------------------

def test_harness_finder_rejects_a_folder_without_testing_py(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    with pytest.raises(ValueError, match="not numba-cuda's numba/cuda/tests"):
        HarnessFinder(str(tmp_path / "tests"))


def test_harness_finder_maps_testing_and_tests_to_the_users_files(fake_tests):
    finder = HarnessFinder(fake_tests)
    spec = finder.find_spec("numba.cuda.testing")
    assert spec.origin == os.path.join(os.path.dirname(fake_tests), "testing.py")
    spec = finder.find_spec("numba.cuda.tests.cudapy.helpers")
    assert spec.origin == os.path.join(fake_tests, "cudapy", "helpers.py")
    assert finder.find_spec("numba.cuda.tests.cudapy").submodule_search_locations == [
        os.path.join(fake_tests, "cudapy")]
    assert finder.find_spec("numba.cuda.tests.cudapy.absent") is None
    assert finder.find_spec("numba.cuda.core.ir") is None      # left to the alias (an error)


def test_internal_placeholder_raises_when_used():
    p = Internal("numba.cuda.extending.register_model")
    with pytest.raises(NotImplementedError, match="register_model is a numba-cuda internal"):
        p(int)
    with pytest.raises(NotImplementedError, match="register_model"):
        p.register


def test_numba_performance_warning_switches_are_settings():
    assert cujit.config.CUDA_LOW_OCCUPANCY_WARNINGS is True
    cujit.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    try:
        assert cujit.config.CUDA_LOW_OCCUPANCY_WARNINGS is False
    finally:
        del cujit.config.CUDA_LOW_OCCUPANCY_WARNINGS
    with pytest.raises(ValueError, match="CUDA_WARN_ON_IMPLICIT_COPY"):
        cujit.config.CUDA_WARN_ON_IMPLICIT_COPY = "maybe"


# ---- running modules ---------------------------------------------------------------------

def test_run_module_counts_pass_fail_and_skip_on_the_simulator(fake_tests):
    r = conformance.run_module(fake_tests, "cudapy/test_mixed.py", sim=True, timeout=300)
    assert (r["passed"], r["failed"], r["errors"], r["skipped"]) == (1, 1, 0, 1)
    assert r["collected"] is True and r["scope"] == "user-facing"
    assert list(r["classes"]) == ["AssertionError: 'grid' != 'not-its-name'"]


def test_run_module_counts_an_unimportable_module_as_errors_of_each_test(fake_tests):
    r = conformance.run_module(fake_tests, "cudadrv/test_internal.py", sim=True, timeout=300)
    assert (r["passed"], r["errors"], r["collected"]) == (0, 2, False)
    assert r["classes"] == {"imports numba.cuda.core.ir": 2}


def test_run_module_counts_a_test_that_used_a_placeholder_with_the_internals(fake_tests):
    r = conformance.run_module(fake_tests, "cudapy/test_placeholder.py", sim=True, timeout=300)
    assert (r["passed"], r["failed"], r["classes"]) == (0, 0, {})
    inner = r["internal_tests"]
    assert (inner["passed"], inner["failed"]) == (0, 1)
    assert inner["classes"] == {"numba internal: numba.cuda.extending.overload_method": 1}
    assert "(+1 internal: 0 passed)" in conformance.format_result_line(r)


def test_run_module_counts_a_module_past_its_timeout_as_errors(fake_tests):
    _write(os.path.join(fake_tests, "cudapy", "test_sleeps.py"), MODULE_SLEEPS)
    r = conformance.run_module(fake_tests, "cudapy/test_sleeps.py", sim=True, timeout=2)
    assert (r["passed"], r["errors"], r["collected"]) == (0, 1, False)
    assert r["classes"] == {"timeout after 2 s": 1}


def test_run_all_reports_each_module_as_it_finishes_and_keeps_the_order(fake_tests):
    seen = []
    modules = ["cudadrv/test_internal.py", "cudapy/test_mixed.py"]
    results = conformance.run_all(fake_tests, modules, sim=True, timeout=300, jobs=2,
                                  on_result=seen.append)
    assert [r["module"] for r in results] == modules
    assert sorted(r["module"] for r in seen) == sorted(modules)
    assert "cudapy/test_mixed.py" in conformance.format_result_line(results[1])


def test_run_all_rejects_bad_jobs_and_timeout(fake_tests):
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        conformance.run_all(fake_tests, [], sim=True, timeout=10, jobs=0)
    with pytest.raises(ValueError, match="timeout must be > 0"):
        conformance.run_all(fake_tests, [], sim=True, timeout=0)


def test_command_writes_json_and_markdown(fake_tests, tmp_path, run_cli):
    out_json, out_md = str(tmp_path / "r.json"), str(tmp_path / "r.md")
    p = run_cli("conformance", "--sim", "--tests", fake_tests, "--jobs", "2",
                "--json", out_json, "--markdown", out_md)
    assert p.returncode == 0, p.stderr
    doc = json.load(open(out_json))
    assert doc["backend"] == "simulator" and doc["complete"] is True
    assert [m["module"] for m in doc["modules"]] == conformance.discover(fake_tests)
    assert doc["totals"]["user-facing"]["passed"] == 1
    assert doc["totals"]["user-facing"]["errors"] == 2
    assert "| imports numba.cuda.core.ir | 2 | numba internals | cudadrv/test_internal.py |" \
        in open(out_md).read()


def test_command_takes_the_folder_from_the_environment(fake_tests, run_cli):
    p = run_cli("conformance", "--sim", "--modules", "cudapy/test_mixed.py",
                env={"CUJIT_CONFORMANCE_TESTS": fake_tests})
    assert p.returncode == 0, p.stderr
    assert "1 passed   1 failed   0 errors   1 skipped" in p.stdout


def test_command_without_a_test_folder_is_exit_2(run_cli):
    p = run_cli("conformance", "--sim", env={"CUJIT_CONFORMANCE_TESTS": ""})
    assert p.returncode == 2
    assert "--tests DIR or CUJIT_CONFORMANCE_TESTS" in p.stderr


def test_command_rejects_an_unknown_module(fake_tests, run_cli):
    p = run_cli("conformance", "--sim", "--tests", fake_tests, "--modules", "cudapy/test_x.py")
    assert p.returncode == 2
    assert "no such test module" in p.stderr


# ---- numba-cuda's own tests (when available) -----------------------------------------------

def _numba_installed():
    return subprocess.run([sys.executable, "-c", "import numba"],
                          capture_output=True).returncode == 0


REAL_TESTS = os.environ.get("CUJIT_CONFORMANCE_TESTS", "")


@pytest.mark.skipif(not (REAL_TESTS and os.path.isdir(REAL_TESTS) and _numba_installed()
                         and importlib.util.find_spec("filecheck") is not None),
                    reason="needs numba-cuda's tests (CUJIT_CONFORMANCE_TESTS), Numba and "
                           "filecheck (docs/conformance.md)")
def test_numba_cudas_fast_subset_passes_on_the_simulator():
    results = conformance.run_all(REAL_TESTS, list(conformance.FAST_SUBSET), sim=True,
                                  timeout=600)
    for r in results:
        assert r["collected"], r
        assert r["failed"] == 0 and r["errors"] == 0, r
    assert sum(r["passed"] for r in results) >= 25


def test_harness_numpy_support_converts_types_and_dtypes_with_cujits_functions(fake_tests):
    nps = HarnessFinder(fake_tests).contents()["numba.cuda.np.numpy_support"]
    assert nps["from_dtype"](np.dtype(np.complex64)) is cujit.complex64
    assert nps["as_dtype"](cujit.float32) == np.dtype(np.float32)
    with pytest.raises(TypeError, match="cannot be a dtype"):
        nps["as_dtype"](cujit.float32[:])


def test_merge_reports_replaces_modules_of_earlier_runs_and_rereads_scopes():
    first = {"date": "2026-11-30", "backend": "simulator", "complete": True, "modules": [
        _result("cudapy/test_a.py", "user-facing", 1, 1, 0, 0, {"TypeError: x": 1}),
        _result("cudapy/test_ir.py", "user-facing", 0, 0, 3, 0, {"imports numba.cuda.core.ir": 3})]}
    second = {"date": "2026-12-01", "backend": "simulator", "complete": True, "modules": [
        _result("cudapy/test_a.py", "user-facing", 2, 0, 0, 0, {})]}
    doc = conformance.merge_reports([first, second])
    assert doc["date"] == "2026-12-01"
    assert [(r["module"], r["scope"], r["passed"]) for r in doc["modules"]] == [
        ("cudapy/test_a.py", "user-facing", 2), ("cudapy/test_ir.py", "internals", 0)]
    assert doc["totals"]["user-facing"]["pass_percent"] == 100.0


def test_merge_reports_rejects_mixed_backends_and_foreign_documents():
    with pytest.raises(ValueError, match="different backends"):
        conformance.merge_reports([{"backend": "gpu", "modules": []},
                                   {"backend": "simulator", "modules": []}])
    with pytest.raises(ValueError, match="without 'modules'"):
        conformance.merge_reports([{"backend": "gpu"}])
    with pytest.raises(ValueError, match="no reports"):
        conformance.merge_reports([])


def test_command_from_json_writes_the_markdown_without_running(tmp_path, run_cli):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"date": "2026-12-01", "backend": "gpu", "complete": True,
                                  "modules": [_result("cudapy/test_a.py", "user-facing",
                                                      3, 0, 0, 1, {})]}))
    out_md = tmp_path / "r.md"
    p = run_cli("conformance", "--from-json", str(report), "--markdown", str(out_md))
    assert p.returncode == 0, p.stderr
    assert open(out_md).read().startswith("Run of 2026-12-01 on the GPU.")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert run_cli("conformance", "--from-json", str(bad)).returncode == 2


def test_docs_list_every_internal_module_with_its_reason():
    doc = open(os.path.join(ROOT, "docs", "conformance.md")).read()
    for module, reason in conformance.INTERNAL_MODULES.items():
        assert f"| `{module}` | {reason} |" in doc


def test_harness_typing_signature_is_a_cujit_signature(fake_tests):
    typing = HarnessFinder(fake_tests).contents()["numba.cuda.typing"]
    sig = typing["signature"](cujit.void, cujit.float32[:], cujit.int32)
    assert sig == cujit.void(cujit.float32[:], cujit.int32)
    typeof = HarnessFinder(fake_tests).contents()["numba.cuda.typing.typeof"]["typeof"]
    assert typeof(np.zeros(3, np.float32)) == cujit.float32[::1]


def test_harness_errors_hold_cujits_typing_error(fake_tests):
    errors = HarnessFinder(fake_tests).contents()["numba.cuda.core.errors"]
    assert errors["TypingError"] is cujit.TypingError
    # the warnings cujit emits are its own classes; Numba's others only with Numba installed
    assert errors["NumbaPerformanceWarning"] is cujit.NumbaPerformanceWarning
    assert errors["NumbaInvalidConfigWarning"] is cujit.NumbaInvalidConfigWarning
    assert ("NumbaDeprecationWarning" in errors) == cujit.HAS_NUMBA


def test_harness_libdevicefuncs_come_from_cujits_libdevice_table(fake_tests):
    mod = HarnessFinder(fake_tests).contents()["numba.cuda.libdevicefuncs"]
    functions, create_signature = mod["functions"], mod["create_signature"]
    retty, args = functions["__nv_sincos"]
    assert retty is cujit.void and [a.is_ptr for a in args] == [False, True, True]
    sig = create_signature(retty, args)
    assert sig.args == (cujit.float64,) and sig.return_type == cujit.types.UniTuple(
        cujit.float64, 2)
    retty, args = functions["__nv_atan2f"]
    assert create_signature(retty, args).return_type is cujit.float32
    assert len(functions) == len(cujit.frontend.libdevice_table.FUNCTIONS)


def test_harness_internals_the_tests_import_are_placeholders(fake_tests):
    contents = HarnessFinder(fake_tests).contents()
    for module, name in [("numba.cuda.launchconfig", "current_launch_config"),
                         ("numba.cuda.deviceufunc", "GUFuncEngine"),
                         ("numba.cuda.extending", "overload_attribute"),
                         ("numba.cuda.core.controlflow", "CFGraph"),
                         ("numba.cuda.core.bytecode", "ByteCode"),
                         ("numba.cuda.cgutils", "create_struct_proxy"),
                         ("numba.cuda.cudadrv.nvrtc", "get_arch_option")]:
        with pytest.raises(NotImplementedError, match=f"{module}.{name} is a numba-cuda"):
            contents[module][name]()
    assert contents["numba.cuda.misc.special"]["literal_unroll"] is cujit.literal_unroll
    assert contents["numba.cuda.np.numpy_support"]["carray"] is cujit.carray
    assert contents["numba.cuda.np.numpy_support"]["farray"] is cujit.farray


MODULE_CHILD_PROCESS = '''
import subprocess
import sys


def test_a_child_python_gets_cujit_as_numba_cuda():
    code = ("import numba.cuda, cujit\\n"
            "assert numba.cuda is cujit, numba.cuda\\n"
            "from numba.cuda.cudadrv.driver import device_memset\\n"
            "print(numba.cuda.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "cujit"
'''


def test_run_module_child_processes_of_a_test_have_the_alias(fake_tests):
    # numba-cuda's test_print runs its kernels in ``python -c`` children
    _write(os.path.join(fake_tests, "cudapy", "test_child.py"), MODULE_CHILD_PROCESS)
    r = conformance.run_module(fake_tests, "cudapy/test_child.py", sim=True, timeout=300)
    assert (r["passed"], r["failed"], r["errors"]) == (1, 0, 0), r


def test_harness_registrations_are_accepted_and_reach_nothing(fake_tests):
    contents = HarnessFinder(fake_tests).contents()
    extending = contents["numba.cuda.extending"]

    def typer(val, c):
        return None

    registered = [
        ("numba.cuda.extending.typeof_impl", extending["typeof_impl"].register(complex)(typer)),
        ("numba.cuda.extending.register_model", extending["register_model"](complex)(dict)),
        ("numba.cuda.extending.type_callable", extending["type_callable"](complex)(typer)),
        ("numba.cuda.cudaimpl.lower",
         contents["numba.cuda.cudaimpl"]["lower"](complex, cujit.types.Integer)(typer)),
        ("numba.cuda.cudadecl.registry.register_attr",
         contents["numba.cuda.cudadecl"]["registry"].register_attr(dict))]
    extending["make_attribute_wrapper"](complex, "real", "real")
    # what was registered is a placeholder: a test using it fails, never passes
    for qualname, placeholder in registered:
        with pytest.raises(NotImplementedError, match=f"{qualname} is a numba-cuda internal"):
            placeholder(1j, None)
    with pytest.raises(NotImplementedError, match="register_model is a numba-cuda internal"):
        extending["register_model"].get_model
    with pytest.raises(NotImplementedError, match="registry.lower_cast is a numba-cuda"):
        contents["numba.cuda.cudadecl"]["registry"].lower_cast


def test_harness_lowering_error_is_an_exception_cujit_never_raises(fake_tests):
    lowering_error = HarnessFinder(fake_tests).contents()["numba.cuda.errors"]["LoweringError"]
    assert issubclass(lowering_error, Exception)
    with pytest.raises(NotImplementedError, match="errors.LoweringError is a numba-cuda"):
        lowering_error("bad lowering")


def test_harness_core_models_can_be_subclassed_but_not_made(fake_tests):
    core_models = HarnessFinder(fake_tests).contents()["numba.cuda.extending"]["core_models"]

    class PointModel(core_models.StructModel):
        pass

    with pytest.raises(NotImplementedError, match="core_models.StructModel is a numba-cuda"):
        PointModel(None, None, [])
    with pytest.raises(NotImplementedError, match="core_models.ArrayModel"):
        core_models.ArrayModel


def test_harness_user_facing_modules_hold_cujits_objects(fake_tests):
    contents = HarnessFinder(fake_tests).contents()
    assert contents["numba.cuda.compiler"]["compile_ptx"] is cujit.compile_ptx
    bf16 = contents["numba.cuda._internal.cuda_bf16"]
    assert bf16["nv_bfloat16"] is cujit.bf16.bfloat16 and bf16["htrunc"] is cujit.bf16.htrunc
    fp8 = contents["numba.cuda._internal.cuda_fp8"]
    assert fp8["cvt_float_to_fp8"] is cujit.fp8.cvt_float_to_fp8
    assert fp8["saturation_t"] is cujit.fp8.saturation_t
    assert fp8["fp8_e4m3"] is cujit.fp8.fp8_e4m3 and fp8["fp8_e8m0"] is cujit.types.fp8_e8m0
    for name in ("cvt_bfloat16raw_to_fp8", "cvt_bfloat16raw_to_e8m0", "cvt_e8m0_to_bf16raw"):
        assert fp8[name] is getattr(cujit.fp8, name)
    ge_1_0 = contents["numba.cuda._compat"]["CUDA_CORE_GE_1_0"]
    core = importlib.util.find_spec("cuda.core") if importlib.util.find_spec("cuda") else None
    if core is None:
        assert ge_1_0 is False
    else:
        from importlib.metadata import version
        assert ge_1_0 == (int(version("cuda-core").split(".")[0]) >= 1)


MODULE_REGISTERS_A_STRUCT = '''
import numpy as np
from numba import cuda
from numba.cuda import types, cgutils
from numba.cuda.compiler import compile_ptx
from numba.cuda.cudaimpl import lower
from numba.cuda.extending import core_models, register_model, typeof_impl
from numba.cuda.testing import CUDATestCase


class Point:
    pass


class PointType(types.Type):
    def __init__(self):
        super().__init__(name="Point")


point_type = PointType()


@typeof_impl.register(Point)
def typeof_point(val, c):
    return point_type


@register_model(PointType)
class PointModel(core_models.StructModel):
    pass


@lower(Point)
def lower_point(context, builder, sig, args):
    return cgutils.create_struct_proxy(point_type)(context, builder)


class TestRegistersAStruct(CUDATestCase):
    def test_plain_kernel_runs(self):
        @cuda.jit
        def double(a):
            a[0] *= 2
        a = np.ones(1)
        double[1, 1](a)
        assert a[0] == 2

    def test_compiler_module_is_cujits(self):
        assert compile_ptx is cuda.compile_ptx
        assert cuda.compiler.compile_ptx is cuda.compile_ptx

    def test_lowering_the_struct_needs_numba(self):
        cgutils.create_struct_proxy(point_type)
'''


def test_run_module_imports_a_module_registering_a_struct_at_import(fake_tests):
    # numba-cuda's extensions_usecases.py registers a struct type this way at import, and
    # test_localmem / test_sm / test_sm_creation import it
    _write(os.path.join(fake_tests, "cudapy", "test_struct.py"), MODULE_REGISTERS_A_STRUCT)
    r = conformance.run_module(fake_tests, "cudapy/test_struct.py", sim=True, timeout=300)
    assert (r["passed"], r["failed"], r["errors"], r["collected"]) == (2, 0, 0, True), r
    # the test that used the registered placeholder counts with the internals
    assert r["internal_tests"]["failed"] == 1
    assert r["internal_tests"]["classes"] == {
        "numba internal: numba.cuda.cgutils.create_struct_proxy": 1}


MODULE_READS_THE_SIMULATORS_TABLES = '''
from numba import cuda
from numba.cuda import config
from numba.cuda.testing import CUDATestCase

if config.ENABLE_CUDASIM:
    from numba.cuda.simulator.vector_types import vector_types
else:
    from numba.cuda.vector_types import vector_types


class TestSimulatorTables(CUDATestCase):
    def test_vector_types_are_cujits(self):
        import cujit
        from cujit import simulator
        self.assertIs(vector_types["float32x4"], cujit.float32x4)
        self.assertEqual(set(vector_types), set(cujit.vector_types.vector_types))
        # the backend package stays cujit's own under numba's simulator name
        self.assertTrue(simulator.__file__.endswith("cujit/simulator/__init__.py"))

    def test_capability_queries_answer_as_numbas_simulator(self):
        self.assertIs(cuda.is_bfloat16_supported(), False)
        self.assertIs(cuda.is_fp8_supported(), False)
'''


def test_run_module_gives_the_simulator_modules_numba_cudas_tests_read(fake_tests):
    # test_vector_type.py reads numba's simulator's vector-type table under the simulator,
    # and test_bfloat16*.py import their names only off it and skip on the query's False
    _write(os.path.join(fake_tests, "cudapy", "test_simtables.py"),
           MODULE_READS_THE_SIMULATORS_TABLES)
    r = conformance.run_module(fake_tests, "cudapy/test_simtables.py", sim=True, timeout=300)
    assert (r["passed"], r["failed"], r["errors"], r["collected"]) == (2, 0, 0, True), r


def test_a_process_a_conformance_test_starts_resolves_the_test_modules(fake_tests):
    # multiprocessing's spawn sends test functions by module name (numba.cuda.tests.*):
    # the child must resolve them as its parent does
    from cujit import numba_alias
    env = numba_alias.child_environment()
    env["CUJIT_CONFORMANCE_TESTS"] = fake_tests
    code = "from numba.cuda.tests.cudapy.helpers import SCALE; print(SCALE)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.stdout.strip() == "3", done.stderr
