import os

import pytest

from cujit.config import config


def test_defaults(monkeypatch):
    for name in ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT"):
        monkeypatch.delenv(name, raising=False)
    assert config.CUDA_DEALLOCS_COUNT == 10
    assert config.source("CUDA_DEALLOCS_COUNT") == "default"


def test_env_read_at_use_time_and_cujit_spelling_wins(monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "0.5")
    assert config.CUDA_DEALLOCS_RATIO == 0.5
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "0.25")
    assert config.CUDA_DEALLOCS_RATIO == 0.25
    assert config.source("CUDA_DEALLOCS_RATIO") == "CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO"


def test_override_and_reset(monkeypatch):
    monkeypatch.delenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", raising=False)
    monkeypatch.delenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", raising=False)
    config.CUDA_DEALLOCS_COUNT = 3
    try:
        assert config.CUDA_DEALLOCS_COUNT == 3
    finally:
        del config.CUDA_DEALLOCS_COUNT
    assert config.CUDA_DEALLOCS_COUNT == 10


def test_bad_value_names_variable(monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "ten")
    with pytest.raises(ValueError, match="CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT='ten'"):
        config.CUDA_DEALLOCS_COUNT


def test_unknown_setting():
    with pytest.raises(AttributeError, match="no setting 'NOPE'"):
        config.NOPE
    with pytest.raises(AttributeError):
        config.NOPE = 1


def test_byte_sizes(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_DEVICE_MEMORY", "64MiB")
    assert config.SIM_DEVICE_MEMORY == 64 << 20


@pytest.mark.parametrize("text", ["infGiB", "-infk", "nanMiB", "1XB", "1.5", "1e3", " "])
def test_bad_byte_size_is_value_error_naming_variable_and_units(monkeypatch, text):
    # "infGiB" raised a bare OverflowError (int(inf)) that named neither the variable nor
    # the accepted forms; the others gave int()'s "invalid literal" wording.
    monkeypatch.setenv("CUJIT_SIM_DEVICE_MEMORY", text)
    with pytest.raises(ValueError, match=r"CUJIT_SIM_DEVICE_MEMORY=.*mib.*1\.5GiB"):
        config.SIM_DEVICE_MEMORY


def test_infinite_byte_size_override_is_value_error_and_keeps_old_value():
    before = config.SIM_DEVICE_MEMORY
    with pytest.raises(ValueError, match="cujit.config.SIM_DEVICE_MEMORY = inf"):
        config.SIM_DEVICE_MEMORY = float("inf")
    assert config.SIM_DEVICE_MEMORY == before


@pytest.mark.parametrize("text,value", [("12", 12), ("1.5GiB", 3 << 29), ("2kb", 2000),
                                        ("1e3k", 1024000), ("64_MiB", 64 << 20)])
def test_byte_size_forms_still_accepted(monkeypatch, text, value):
    monkeypatch.setenv("CUJIT_SIM_DEVICE_MEMORY", text)
    assert config.SIM_DEVICE_MEMORY == value


def test_config_default_reads_the_built_in_value_and_rejects_unknown_names():
    from cujit.config import config
    config.CUDA_DEALLOCS_COUNT = 3
    assert config.default("CUDA_DEALLOCS_COUNT") == 10
    with pytest.raises(AttributeError, match="NO_SUCH"):
        config.default("NO_SUCH")


@pytest.mark.parametrize("text,want", [("1", True), ("TRUE", True), ("yes", True), ("On", True),
                                       ("0", False), ("false", False), ("NO", False),
                                       ("off", False), ("", False)])
def test_bool_spellings(monkeypatch, text, want):
    monkeypatch.setenv("CUJIT_SIM_CHECKS", text)
    assert config.SIM_CHECKS is want


def test_bool_error_lists_every_accepted_spelling(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_CHECKS", "maybe")
    with pytest.raises(ValueError, match="CUJIT_SIM_CHECKS") as ei:
        config.SIM_CHECKS
    for word in ("1", "true", "yes", "on", "0", "false", "no", "off", "'maybe'"):
        assert word in str(ei.value)


# -- the tooling settings (issue: garbage values were silently taken as the default) ----------
@pytest.mark.parametrize("attr,var,default", [
    ("SIM_VECTOR", "CUJIT_SIM_VECTOR", True), ("SIM_TYPED", "CUJIT_SIM_TYPED", True),
    ("PREFETCH", "CUJIT_PREFETCH", True), ("SIM_PROGRESS", "CUJIT_SIM_PROGRESS", None),
    ("NVVM_BACKEND", "CUJIT_NVVM_BACKEND", ""), ("CACHE_DIR", "CUJIT_CACHE_DIR", ""),
    ("CUDA_HOME", "CUDA_HOME", ""), ("CUDA_PATH", "CUDA_PATH", "")])
def test_tooling_settings_are_declared_with_their_variable(monkeypatch, attr, var, default):
    for name in config.env_names(attr):
        monkeypatch.delenv(name, raising=False)
    assert config.env_names(attr)[0] == var
    assert getattr(config, attr) == default and config.source(attr) == "default"
    assert attr in config.as_dict()


@pytest.mark.parametrize("var,attr", [("CUJIT_SIM_VECTOR", "SIM_VECTOR"),
                                      ("CUJIT_SIM_TYPED", "SIM_TYPED"),
                                      ("CUJIT_SIM_PROGRESS", "SIM_PROGRESS"),
                                      ("CUJIT_PREFETCH", "PREFETCH")])
def test_tooling_bools_reject_garbage_naming_the_variable(monkeypatch, var, attr):
    monkeypatch.setenv(var, "maybe")
    with pytest.raises(ValueError, match=f"{var}='maybe'.*expected one of 1/true/yes/on"):
        getattr(config, attr)
    monkeypatch.setenv(var, "OFF")
    assert getattr(config, attr) is False


def test_sim_progress_is_a_bool_or_auto(monkeypatch):
    for text, want in (("auto", None), ("", None), ("1", True), ("no", False)):
        monkeypatch.setenv("CUJIT_SIM_PROGRESS", text)
        assert config.SIM_PROGRESS is want
    monkeypatch.delenv("CUJIT_SIM_PROGRESS")
    config.SIM_PROGRESS = True
    try:
        assert config.SIM_PROGRESS is True
        config.SIM_PROGRESS = None                   # back to auto, as an override
        assert config.SIM_PROGRESS is None and config.source("SIM_PROGRESS") == "override"
    finally:
        del config.SIM_PROGRESS


def test_nvvm_backend_accepts_its_two_values_in_any_case(monkeypatch):
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "LLVMLite")
    assert config.NVVM_BACKEND == "llvmlite"
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "garbage")
    with pytest.raises(ValueError, match="CUJIT_NVVM_BACKEND='garbage'.*llvmlite or nvvm"):
        config.NVVM_BACKEND
    with pytest.raises(ValueError, match="NVVM_BACKEND = 'ptxas'"):
        config.NVVM_BACKEND = "ptxas"


def test_cache_dir_takes_numba_spelling_second(monkeypatch, tmp_path):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert config.CACHE_DIR == str(tmp_path)
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "c"))
    assert config.CACHE_DIR == str(tmp_path / "c")


def test_export_sets_the_override_and_the_variable_for_child_processes(monkeypatch):
    import os
    # setenv first, so that monkeypatch restores the variable's state before the test (absent
    # or set) and export's write does not outlive it: it would turn checks off for the rest
    # of the run
    monkeypatch.setenv("CUJIT_SIM_CHECKS", "1")
    monkeypatch.delenv("CUJIT_SIM_CHECKS")
    try:
        config.export("SIM_CHECKS", False)
        assert config.SIM_CHECKS is False and config.source("SIM_CHECKS") == "override"
        assert os.environ["CUJIT_SIM_CHECKS"] == "0"
        with pytest.raises(ValueError, match="SIM_CHECKS = 'perhaps'"):
            config.export("SIM_CHECKS", "perhaps")
        assert os.environ["CUJIT_SIM_CHECKS"] == "0"     # untouched by the refused value
    finally:
        del config.SIM_CHECKS


def test_reader_is_getattr_fast_and_lenient_when_asked(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_DEVICES", "3")
    strict, lenient = config.reader("SIM_DEVICES"), config.reader("SIM_DEVICES", strict=False)
    assert strict() == lenient() == 3
    monkeypatch.setenv("CUJIT_SIM_DEVICES", "99")
    with pytest.raises(ValueError, match="CUJIT_SIM_DEVICES='99'"):
        strict()
    assert lenient() == 1                              # the default, never an exception
    with pytest.raises(AttributeError, match="no setting 'NOPE'"):
        config.reader("NOPE")


def test_readers_reads_several_settings_each_call(monkeypatch):
    for name in ("CUJIT_SIM_DEVICES", "CUJIT_SIM_CHECKS", "CUJIT_SIM_DEVICE_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    strict = config.readers(("SIM_DEVICES", "SIM_CHECKS"))
    lenient = config.readers(["SIM_DEVICES", "SIM_CHECKS"], strict=False)
    assert strict() == lenient() == (1, True)          # the defaults, nothing set
    monkeypatch.setenv("CUJIT_SIM_CHECKS", "0")       # the second setting alone
    assert strict() == (1, False)
    monkeypatch.setenv("CUJIT_SIM_DEVICES", "4")
    assert strict() == (4, False)
    monkeypatch.delenv("CUJIT_SIM_CHECKS")
    assert strict() == (4, True)
    config.SIM_DEVICES = 2                             # an override beats the environment
    try:
        assert strict() == lenient() == (2, True)
    finally:
        del config.SIM_DEVICES
    assert strict() == (4, True)
    monkeypatch.setenv("CUJIT_SIM_DEVICES", "99")
    with pytest.raises(ValueError, match="CUJIT_SIM_DEVICES='99'"):
        strict()
    assert lenient() == (1, True)                      # the default, never an exception
    # an override of some other setting takes the slow path: still the right values
    config.SIM_DEVICE_MEMORY = 1 << 20
    try:
        assert lenient() == (1, True)
    finally:
        del config.SIM_DEVICE_MEMORY
    one = config.readers(("SIM_DEVICES",), strict=False)
    assert one() == (1,)
    with pytest.raises(AttributeError, match="no setting 'NOPE'"):
        config.readers(("SIM_DEVICES", "NOPE"))
    with pytest.raises(ValueError, match="at least one setting"):
        config.readers(())


def test_environment_copies_and_update_environment_checks_types(monkeypatch):
    import os
    monkeypatch.setenv("CUJIT_TEST_ENV_COPY", "a")
    env = config.environment()
    env["CUJIT_TEST_ENV_COPY"] = "b"                   # a copy: the process is unchanged
    assert os.environ["CUJIT_TEST_ENV_COPY"] == "a"
    with pytest.raises(TypeError, match="str -> str"):
        config.update_environment({"CUJIT_TEST_ENV_COPY": "c", "CUJIT_TEST_ENV_N": 1})
    assert os.environ["CUJIT_TEST_ENV_COPY"] == "a" and "CUJIT_TEST_ENV_N" not in os.environ
    config.update_environment({"CUJIT_TEST_ENV_COPY": "d"})
    assert os.environ["CUJIT_TEST_ENV_COPY"] == "d"


def test_numbas_setting_names_read_and_write_the_one_settings_object(monkeypatch):
    # numba.cuda.config's user-facing names that cujit has settings for (docs/environment.md)
    import cujit
    assert cujit.config is config
    for name in ("ENABLE_CUDASIM", "CUDA_DEALLOCS_COUNT", "CUDA_DEALLOCS_RATIO",
                 "CUDA_MEMORY_MANAGER", "CUDA_PER_THREAD_DEFAULT_STREAM",
                 "CUDA_ARRAY_INTERFACE_SYNC", "CACHE_DIR"):
        assert getattr(cujit.config, name) == getattr(config, name)
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "7")
    monkeypatch.delenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", raising=False)
    assert cujit.config.CUDA_DEALLOCS_COUNT == 7           # numba's variable, numba's name
    try:
        cujit.config.CUDA_DEALLOCS_COUNT = 2
        assert config.CUDA_DEALLOCS_COUNT == 2 and config.source("CUDA_DEALLOCS_COUNT") == \
            "override"
    finally:
        del cujit.config.CUDA_DEALLOCS_COUNT
    assert config.CUDA_DEALLOCS_COUNT == 7


def test_a_numba_setting_cujit_lacks_is_an_attribute_error_naming_the_known_ones():
    import cujit
    with pytest.raises(AttributeError, match="no setting 'DISABLE_JIT'; known: .*ENABLE_CUDASIM"):
        cujit.config.DISABLE_JIT
    with pytest.raises(AttributeError, match="no setting 'DISABLE_JIT'"):
        cujit.config.DISABLE_JIT = 1


@pytest.mark.parametrize("attr, var", [("CUDA_DEBUGINFO_DEFAULT", "NUMBA_CUDA_DEBUGINFO"),
                                       ("CUDA_ENABLE_NRT", "NUMBA_CUDA_ENABLE_NRT"),
                                       ("ALWAYS_WARN_UNINIT_VAR",
                                        "NUMBA_ALWAYS_WARN_UNINIT_VAR"),
                                       ("DISABLE_PERFORMANCE_WARNINGS",
                                        "NUMBA_DISABLE_PERFORMANCE_WARNINGS")])
def test_numbas_debuginfo_nrt_and_uninit_settings(monkeypatch, attr, var):
    for name in config.env_names(attr):
        monkeypatch.delenv(name, raising=False)
    assert getattr(config, attr) is False
    monkeypatch.setenv(var, "1")
    assert getattr(config, attr) is True
    monkeypatch.setenv(var, "maybe")
    with pytest.raises(ValueError, match=var):
        getattr(config, attr)


def test_cuda_debuginfo_default_is_jits_debug_default(monkeypatch):
    import cujit

    def k(x):
        x[0] = 1
    monkeypatch.delenv("CUJIT_CUDA_DEBUGINFO", raising=False)
    monkeypatch.delenv("NUMBA_CUDA_DEBUGINFO", raising=False)
    assert not cujit.jit(k).targetoptions.get("debug")
    config.CUDA_DEBUGINFO_DEFAULT = 1
    try:
        assert cujit.jit(k).targetoptions["debug"] is True
        assert cujit.jit(debug=False)(k).targetoptions["debug"] is False
    finally:
        del config.CUDA_DEBUGINFO_DEFAULT


def test_disable_cuda_refuses_the_driver_with_numbas_message():
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUJIT_ENABLE_CUDASIM", "NUMBA_ENABLE_CUDASIM")}
    env["NUMBA_DISABLE_CUDA"] = "1"
    code = ("import cujit\n"
            "try:\n"
            "    cujit.device_array(1)\n"
            "except cujit.CudaSupportError as e:\n"
            "    print('raised:', e)\n"
            "print('error:', cujit.cuda_error())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120).stdout
    msg = "CUDA is disabled due to setting NUMBA_DISABLE_CUDA=1"
    assert f"raised: {msg}" in out and f"error: {msg}" in out


def test_opt_levels_are_numbas_values():
    # numba's config._OptLevel: an int 0-3, and "max" (level 3 that remembers it was "max")
    OptLevel = config._OptLevel
    assert [int(OptLevel(v)) for v in (0, 1, 2, 3, "2", "max")] == [0, 1, 2, 3, 2, 3]
    assert OptLevel("max").is_opt_max and not OptLevel(3).is_opt_max
    assert repr(OptLevel("max")) == "_OptLevel('max')" and repr(OptLevel(0)) == "_OptLevel(0)"
    for bad in (4, -1, "fast", 1.5, True, None):
        with pytest.raises(ValueError, match="not one of 0, 1, 2, 3, 'max'"):
            OptLevel(bad)


def test_opt_setting_reads_numba_opt_and_keeps_max_through_an_override(monkeypatch):
    for name in config.env_names("OPT"):
        monkeypatch.delenv(name, raising=False)
    assert config.OPT == 3 and config.source("OPT") == "default"
    monkeypatch.setenv("NUMBA_OPT", "0")
    assert config.OPT == 0 and isinstance(config.OPT, config._OptLevel)
    monkeypatch.setenv("NUMBA_OPT", "fastest")
    with pytest.raises(ValueError, match="NUMBA_OPT='fastest'"):
        config.OPT
    try:
        config.OPT = config._OptLevel("max")
        assert config.OPT.is_opt_max and config.OPT == 3
        config.OPT = 1
        assert config.OPT == 1 and isinstance(config.OPT, config._OptLevel)
        with pytest.raises(ValueError, match="cujit.config.OPT = 7"):
            config.OPT = 7
        assert config.OPT == 1                  # a refused value leaves the old one
    finally:
        del config.OPT


def test_opt_zero_makes_opt_false_the_default_of_jit(monkeypatch):
    import warnings
    import cujit
    from cujit import NumbaInvalidConfigWarning

    def k(x):
        x[0] = 1
    for name in config.env_names("OPT") + config.env_names("CUDA_DEBUGINFO_DEFAULT"):
        monkeypatch.delenv(name, raising=False)
    assert "opt" not in cujit.jit(k).targetoptions      # on: the build's level 3
    try:
        config.OPT = config._OptLevel(0)
        assert cujit.jit(k).targetoptions["opt"] is False
        assert cujit.jit(opt=True)(k).targetoptions["opt"] is True
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cujit.jit(debug=True)(k)                    # debug with opt off: no warning
        config.OPT = config._OptLevel("max")
        with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
            cujit.jit(debug=True)(k)
    finally:
        del config.OPT


def test_force_cuda_cc_parses_major_minor_and_arch_suffix(monkeypatch):
    for name in config.env_names("FORCE_CUDA_CC"):
        monkeypatch.delenv(name, raising=False)
    assert config.FORCE_CUDA_CC is None
    for text, want in (("8.0", (8, 0)), ("9.0a", (9, 0, "a")), ("10.0f", (10, 0, "f")),
                       ("", None)):
        monkeypatch.setenv("NUMBA_FORCE_CUDA_CC", text)
        assert config.FORCE_CUDA_CC == want
    monkeypatch.setenv("NUMBA_FORCE_CUDA_CC", "sm_90")
    with pytest.raises(ValueError, match="NUMBA_FORCE_CUDA_CC='sm_90'"):
        config.FORCE_CUDA_CC
    monkeypatch.delenv("NUMBA_FORCE_CUDA_CC")
    try:
        config.FORCE_CUDA_CC = (9, 0, "a")              # numba's override_config form
        assert config.FORCE_CUDA_CC == (9, 0, "a")
        config.FORCE_CUDA_CC = (8, 6, "")
        assert config.FORCE_CUDA_CC == (8, 6)
        for bad in ((9,), (9, 0, "b"), "nine", 90):
            with pytest.raises(ValueError, match="FORCE_CUDA_CC"):
                config.FORCE_CUDA_CC = bad
        assert config.FORCE_CUDA_CC == (8, 6)
        config.FORCE_CUDA_CC = None
        assert config.FORCE_CUDA_CC is None
    finally:
        del config.FORCE_CUDA_CC
