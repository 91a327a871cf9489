"""Progress of long simulator launches (blocks done of total on stderr, via tqdm), and the
variable that turns it off."""
import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim


def four_blocks(out):
    out[cuda.grid(1)] = 1


@pytest.fixture
def fast_progress(monkeypatch):
    pytest.importorskip("tqdm")
    from cujit.simulator import progress
    monkeypatch.setattr(progress, "PROGRESS_AFTER_S", 0.0)
    return monkeypatch


def test_long_launch_shows_blocks_done_of_total(launch, fast_progress, capfd):
    fast_progress.setenv("CUJIT_SIM_PROGRESS", "1")
    launch(four_blocks, 4, 2, np.zeros(8))
    err = capfd.readouterr().err
    assert "simulating four_blocks" in err and "/4" in err and "block" in err


def test_progress_can_be_turned_off(launch, fast_progress, capfd):
    fast_progress.setenv("CUJIT_SIM_PROGRESS", "0")
    launch(four_blocks, 4, 2, np.zeros(8))
    assert capfd.readouterr().err == ""


def test_progress_needs_a_terminal_by_default(launch, fast_progress, capfd):
    fast_progress.delenv("CUJIT_SIM_PROGRESS", raising=False)
    launch(four_blocks, 4, 2, np.zeros(8))     # stderr is captured: not a terminal
    assert capfd.readouterr().err == ""


def test_short_launch_shows_nothing(launch, monkeypatch, capfd):
    monkeypatch.setenv("CUJIT_SIM_PROGRESS", "1")
    launch(four_blocks, 4, 2, np.zeros(8))     # well under 2 s
    assert capfd.readouterr().err == ""
