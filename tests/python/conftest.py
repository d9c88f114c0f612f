"""pytest's fixtures for the Python package's checks (tests/README.md): run in the venv the
package is installed in, from anywhere, as scripts/package-check.sh does:

    python -m pytest tests/python --samples-dir BUILD/samples [-k NAME] [--junitxml FILE]

Each check is a test function; a check reports what it found wrong through `fail` (one line each),
and the test fails with them all."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "samples")):  # the checks' helpers, and the samples' modules
    if path not in sys.path:
        sys.path.insert(0, path)


def pytest_addoption(parser):
    parser.addoption("--samples-dir", default=None,
                     help="the .pt2 samples of this torch (BUILD/samples, made by scripts/setup.sh)")


class Findings(list):
    """A check's `fail(what)`: each call one thing found wrong."""

    def __call__(self, what):
        self.append(what)
        print(f"FAIL {what}")


@pytest.fixture
def fail():
    return Findings()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test whose check called fail() fails, listing what it found (a failure of the test, not
    an error of its fixture)."""
    result = yield
    found = item.funcargs.get("fail")
    if found:
        pytest.fail("; ".join(found), pytrace=False)
    return result


@pytest.fixture(scope="session")
def samples():
    """samples/make_samples.py as a module (its SAMPLES and classify)."""
    import in_process
    return in_process.load_samples()


@pytest.fixture(scope="session")
def samples_dir(request):
    folder = request.config.getoption("--samples-dir")
    if not folder or not os.path.isdir(folder):
        pytest.skip(f"--samples-dir {folder!r}: the .pt2 samples of this torch are needed (BUILD/samples)")
    return folder
