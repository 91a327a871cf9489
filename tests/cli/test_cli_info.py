"""``python -m cujit info``: works and explains itself with or without a GPU or driver."""
import json

import pytest

from cujit import cli


def test_gather_info_has_every_section():
    info = cli.gather_info()
    assert set(info) >= {"versions", "driver", "devices", "toolchain", "memory_manager",
                         "simulator", "config"}
    assert info["versions"]["cujit"] == "0.1.0"
    assert info["versions"]["numpy"]
    assert info["config"]["CUDA_DEALLOCS_COUNT"]["env"] == [
        "CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT"]
    lines = cli.format_info(info)
    assert lines[0] == "versions:"
    assert any(line.startswith("driver: ") for line in lines)
    assert any(line.startswith("simulator setting: ") for line in lines)
    assert any(line.startswith("runs on: your programs -> ") for line in lines)


def test_format_info_without_driver_says_what_to_do():
    info = cli.gather_info()
    info["driver"] = {"available": False, "why_not": "CudaSupportError: no libcuda",
                      "hint": "install the NVIDIA driver, or CUJIT_ENABLE_CUDASIM=1"}
    info["devices"] = []
    lines = cli.format_info(info)
    assert "driver: none - CudaSupportError: no libcuda" in lines
    assert "devices: none" in lines
    assert any("CUJIT_ENABLE_CUDASIM=1" in line for line in lines)


def test_info_on_the_simulator_lists_the_simulated_device(run_cli):
    p = run_cli("info", "--json", env={"CUJIT_ENABLE_CUDASIM": "1"})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["simulator"]["enabled"] is True
    assert doc["simulator"]["source"] == "CUJIT_ENABLE_CUDASIM"
    assert doc["driver"]["simulator"] is True
    assert doc["driver"]["max_ptx_isa"]
    assert len(doc["devices"]) >= 1 and doc["devices"][0]["compute_capability"]
    assert "simulator setting: ON" in p.stderr   # the human report went to stderr
    assert doc["backend"] == {"programs": "simulator", "demo": "simulator",
                              "why": "CUJIT_ENABLE_CUDASIM=1"}


def test_info_runs_without_forcing_a_backend(run_cli):
    p = run_cli("info", env={"CUJIT_ENABLE_CUDASIM": "0", "NUMBA_ENABLE_CUDASIM": "0"})
    assert p.returncode == 0, p.stderr
    assert "driver: CUDA" in p.stdout or "driver: none" in p.stdout
    assert "toolchain:" in p.stdout and "config (" in p.stdout


def test_info_json_to_a_file(run_cli, tmp_path):
    path = tmp_path / "info.json"
    p = run_cli("info", "--json", str(path), env={"CUJIT_ENABLE_CUDASIM": "1"})
    assert p.returncode == 0, p.stderr
    assert json.loads(path.read_text())["versions"]["cujit"] == "0.1.0"
    assert "versions:" in p.stdout


def test_malformed_setting_is_reported_by_name(run_cli):
    p = run_cli("info", env={"CUJIT_ENABLE_CUDASIM": "1",
                             "CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT": "ten"})
    assert p.returncode == 2
    assert "CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT='ten'" in p.stderr
    assert "Traceback" not in p.stderr


def test_unknown_command_is_a_usage_error():
    with pytest.raises(SystemExit) as exc:
        cli.main(["frobnicate"])
    assert exc.value.code == 2


def test_probe_gpu_answers_with_a_reason():
    ok, why = cli.probe_gpu()
    assert isinstance(ok, bool)
    assert ok or why


def test_bench_without_a_checkout_explains(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "_benchmarks_dir", lambda: str(tmp_path))
    assert cli.main(["bench", "--quick"]) == 2
    assert "source checkout" in capsys.readouterr().err


def test_environment_doc_lists_every_setting():
    import os
    from cujit.config import config
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "environment.md")) as f:
        text = f.read()
    for attr in config.as_dict():
        assert f"`{attr}`" in text, attr
        for name in config.env_names(attr):
            assert f"`{name}`" in text, name


def test_backend_without_a_gpu_says_programs_fail_and_demo_falls_back():
    info = cli.gather_info()
    info["driver"] = {"available": False, "why_not": "x", "hint": "y"}
    info["devices"] = []

    class Cfg:
        ENABLE_CUDASIM = False
    b = cli._backend_info(info, Cfg)
    assert (b["programs"], b["demo"]) == ("none", "simulator")
    assert "CudaSupportError" in b["why"] and "CUJIT_ENABLE_CUDASIM=1" in b["why"]
    info["backend"] = b
    line = [x for x in cli.format_info(info) if x.startswith("runs on:")][0]
    assert "your programs -> nothing (CudaSupportError)" in line
    assert "`python -m cujit demo` -> the simulator" in line


def test_backend_with_a_gpu():
    info = {"driver": {"available": True}, "devices": [{"id": 0}]}

    class Cfg:
        ENABLE_CUDASIM = False
    assert cli._backend_info(info, Cfg) == {"programs": "gpu", "demo": "gpu",
                                            "why": "1 CUDA device(s) found"}


def test_no_gpu_message_is_one_paragraph_with_the_way_out():
    from cujit.driver.errors import driver_load_reason, no_gpu_message
    exc = RuntimeError('"cuda" is an NVIDIA driver library and can only be found via system '
                       'search. Ensure the NVIDIA display driver is installed.')
    reason = driver_load_reason(exc)
    assert reason == "the NVIDIA driver library (libcuda) is not installed"
    msg = no_gpu_message(reason)
    assert "\n" not in msg and ".." not in msg and "(" + "(" not in msg
    assert msg.startswith("no usable CUDA GPU: the NVIDIA driver library (libcuda) is not "
                          "installed. ")
    assert "CUJIT_ENABLE_CUDASIM=1 python your_script.py" in msg
    assert driver_load_reason(RuntimeError("odd failure.")) == "odd failure"
    assert ".." not in no_gpu_message("odd failure.")
