"""The Python package's in-process checks (in_process.py and the files it draws on) as pytest
tests, in the order they have always run: each a test function, selectable with -k, reported
with --junitxml. in_process.py's own checks report through its module's fail(); the others take
the `fail` fixture."""
import in_process as ip
from compiled_checks import check_compiled_cases
from ddp_checks import check_ddp, check_ddp_changed
from fix_checks import check_fixes
from hazard_checks import check_hazards
from rewrite_checks import check_rewrites
from what_if_checks import check_what_if, check_what_if_option, check_what_if_samples


def run_own(check, *args):
    """One of in_process.py's checks, its failures its own."""
    del ip.failures[:]
    check(*args)
    assert not ip.failures, "; ".join(ip.failures)


def test_torch_mismatch():
    run_own(ip.check_torch_mismatch)


def test_report_files():
    run_own(ip.check_report_files)


def test_failed_block():
    run_own(ip.check_failed_block)


def test_steps():
    run_own(ip.check_steps)


def test_model_choice():
    run_own(ip.check_model_choice)


def test_one_profile_at_a_time():
    run_own(ip.check_one_profile_at_a_time)


def test_compiled():
    run_own(ip.check_compiled)


def test_training_step():
    run_own(ip.check_training_step)


def test_python_backward_lines():
    run_own(ip.check_python_backward_lines)


def test_training_counters():
    run_own(ip.check_training_counters)


def test_script():
    run_own(ip.check_script)


def test_marked_steps():
    run_own(ip.check_marked_steps)


def test_nothing_recorded():
    run_own(ip.check_nothing_recorded)


def test_ddp(fail):
    check_ddp(fail)


def test_ddp_changed(fail):
    check_ddp_changed(fail)


def test_workers_and_threads():
    run_own(ip.check_workers_and_threads)


def test_interrupted():
    run_own(ip.check_interrupted)


def test_never_exited():
    run_own(ip.check_never_exited)


def test_pool_started_in_block():
    run_own(ip.check_pool_started_in_block)


def test_resnet_against_pt2(samples_dir):
    run_own(ip.check_resnet_against_pt2, samples_dir)


def test_gradient_verdicts(samples):
    run_own(ip.check_gradient_verdicts, samples)


def test_samples(samples):
    run_own(ip.check_samples, samples)


def test_hazards(fail):
    check_hazards(fail)


def test_compiled_cases(fail):
    check_compiled_cases(fail)


def test_fixes(fail):
    check_fixes(fail)


def test_rewrites(fail):
    check_rewrites(fail)


def test_what_if(fail):
    check_what_if(fail)


def test_what_if_option(fail):
    check_what_if_option(fail)


def test_what_if_samples(samples, fail):
    check_what_if_samples(samples, fail)


def test_batch_permuted_outside(samples):
    run_own(ip.check_batch_permuted_outside, samples)
