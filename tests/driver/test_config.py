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
