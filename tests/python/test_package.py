"""The package's other checks as pytest tests: no observer effect under torch.compile
(observer_checks.py), the GPU tracer's wiring where there is no GPU (gpu_wiring.py)."""
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
