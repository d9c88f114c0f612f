"""The package's other checks as pytest tests: no observer effect under torch.compile
(observer_checks.py), the GPU tracer's wiring where there is no GPU (gpu_wiring.py), bounded
pools over many profile() blocks (pool_checks.py)."""
import os
import subprocess
import sys

import gpu_wiring
import pytest
from observer_checks import check_observer


def test_no_observer_effect_under_compile(fail):
    check_observer(fail)


@pytest.mark.parametrize("check", [gpu_wiring.check_no_device_and_turned_off, gpu_wiring.check_profiler_orders,
                                   gpu_wiring.check_real_profiler_inside, gpu_wiring.check_graph_replay_op],
                         ids=lambda c: c.__name__)
def test_gpu_wiring(check):
    del gpu_wiring.failures[:]
    check()
    assert not gpu_wiring.failures, "; ".join(gpu_wiring.failures)


def test_pools_bounded_over_many_profile_blocks():
    """pool_checks.py in a process of its own: no other test's report holds the pools' epoch."""
    done = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "pool_checks.py")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
