"""``@jit(cache=True)`` hit on the GPU in a fresh process: import, load, first launch — with no
compiler loaded (issue 17's disk-cache target; the timing itself is a benchmark row,
``cache_hit_launch_s``, never asserted here)."""
import json
import os
import subprocess
import sys

import pytest

_SCRIPT = '''
import json, sys
import numpy as np
sys.path.insert(0, {src!r})
from kmod import scale
import cujit as cuda
d = cuda.to_device(np.arange(1024, dtype=np.float32))
scale[4, 256](d, np.float32(2.0))
cuda.synchronize()
from cujit.nvvm import libnvvm as nvvm, linker
print(json.dumps({{"ok": bool(d.copy_to_host()[3] == 6.0),
                  "llvmlite": any(m.startswith("llvmlite") for m in sys.modules),
                  "lowering": "cujit.nvvm.lowering" in sys.modules,
                  "nvvm_loaded": nvvm._nvvm_state is not None,
                  "nvjitlink_loaded": linker._state is not None}}))
'''


@pytest.mark.gpu
def test_cache_hit_launch_loads_no_compiler(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "kmod.py").write_text(
        "import cujit as cuda\n\n@cuda.jit(cache=True)\ndef scale(x, factor):\n"
        "    i = cuda.grid(1)\n    if i < x.size:\n        x[i] = x[i] * factor\n")
    env = dict(os.environ, CUJIT_CACHE_DIR=str(tmp_path / "cache"))
    docs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _SCRIPT.format(src=str(src))],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        docs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, hit = docs
    assert first["ok"] and first["lowering"]
    assert hit["ok"]
    assert not hit["llvmlite"] and not hit["lowering"]
    assert not hit["nvvm_loaded"] and not hit["nvjitlink_loaded"]
