#!/usr/bin/env bash
# The Python package as a user installs it (README, "In your Python"): a fresh venv, the
# README's install commands, then the package's checks (pytest tests/python) and the
# installed `layoutprof` command on a sample.
#
#   scripts/package-check.sh                  with the tested 2.x wheel's torch (TORCH_PYTHON=wheel)
#   TORCH_PYTHON=/path/to/python scripts/package-check.sh
#                                             with that Python's torch (any 2.x wheel)
#
# The venv is made anew each time under LAYOUTPROF_CACHE; its torch is the wheel's venv's, seen
# through a .pth file rather than installed again (5.5 GB), so that it is the very torch the
# other suites test. The native part builds in build-python/ (ccache'd like the others).
# Then a second fresh venv, whose torch pip installs (the CPU wheel 2.13.0), gets the same
# install commands and the first commands a user runs (import, --version, python -m layoutprof).
# Then the source distribution: made with `python -m build --sdist`, unpacked, installed the same
# way into a third venv (its build folder inside the unpacked tree, so that ccache finds the
# objects the first build made), and the same first commands.
# Last line: "package: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
export TORCH_PYTHON=${TORCH_PYTHON:-wheel}
INSTALLED_TORCH=2.13.0  # the torch that pip installs into the second venv (below)
source scripts/torch-env.sh

# What layoutprof's C++ needs from Debian (the README's apt-get line), and what this check runs.
install_missing package g++ cmake ninja-build ccache pkg-config python3-dev python3-venv libpfm4-dev \
  libcli11-dev nlohmann-json3-dev libsimdjson-dev libfmt-dev libzip-dev
build=$(scripts/setup.sh)  # the samples the command is run on, made by this torch
torch_env_resolve          # TORCH_PY: the Python whose torch the venv gets

venv=$LAYOUTPROF_CACHE/venv-package
rm -rf "$venv"
"$(dirname "$(readlink -f "$TORCH_PY")")/python3" -m venv "$venv"
site() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site "$TORCH_PY" >"$(site "$venv/bin/python")/layoutprof-torch.pth"

# Every suite's builds share the cache: one CI run's nearly fill ccache's default 5 GB (4.45 GB seen).
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-15G}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=1
echo "=== pip install scikit-build-core; pip install --no-build-isolation . ===" >&2
"$venv/bin/pip" install -q --disable-pip-version-check scikit-build-core pytest >&2
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation . \
  -Cbuild-dir="$PWD/build-python" -Ccmake.define.LAYOUTPROF_WERROR=ON >&2

passed=0 failed=0
check() {  # check NAME COMMAND...: runs it, counts it
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "package: passed: $name"
  else
    failed=$((failed + 1)); echo "package: FAILED: $name"
  fi
}
cd /tmp  # nothing from the checkout on sys.path: the installed package only
check "import layoutprof" "$venv/bin/python" -c 'import layoutprof; print("layoutprof", layoutprof.__version__)'
check "the native module: torch's pybind11 internals, PyInit__native alone (tests/python/abi_checks.py)" \
  "$venv/bin/python" "$OLDPWD/tests/python/abi_checks.py"
check "layoutprof --version (venv's bin/)" "$venv/bin/layoutprof" --version
sample=$OLDPWD/$build/samples/transpose_reshape.pt2
check "layoutprof MODEL.pt2 (venv's bin/)" bash -c \
  "'$venv/bin/layoutprof' '$sample' --no-counters --json /tmp/package-check.json >/dev/null &&
   python3 -c 'import json,sys; r=json.load(open(\"/tmp/package-check.json\")); sys.exit(r[\"summary\"][\"copies\"][\"implicit_layout\"] != 1)'"
pytest() {  # pytest PYTHON TEST_FILE: its tests, JUnit XML beside the build's other outputs
  "$1" -m pytest "$OLDPWD/tests/python/$2" --samples-dir "$OLDPWD/$build/samples" \
    --junitxml "$OLDPWD/$build/python-${2%.py}-$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])').xml"
}
check "in-process recording (pytest tests/python/test_in_process.py)" pytest "$venv/bin/python" test_in_process.py
check "no observer effect under torch.compile, GPU wiring without a GPU (pytest tests/python/test_package.py)" \
  pytest "$venv/bin/python" test_package.py
cd "$OLDPWD"

# The same install where pip really installed the venv's torch: another release, a CPU-only
# build (the CPU wheel lying on disk, 2.13.0; no torchvision beside it), then the three commands
# a user runs first. Its venv and build folder keep their paths from run to run (ccache).
installed=$LAYOUTPROF_CACHE/venv-install-torch-$INSTALLED_TORCH
rm -rf "$installed"
"$(dirname "$(readlink -f "$TORCH_PY")")/python3" -m venv "$installed"
echo "=== $installed: pip install torch==$INSTALLED_TORCH scikit-build-core; pip install --no-build-isolation . ===" >&2
"$installed/bin/pip" install -q --disable-pip-version-check "torch==$INSTALLED_TORCH" scikit-build-core 2>&1 | grep -v "is ignored" >&2 || true
"$installed/bin/pip" install -q --disable-pip-version-check --no-build-isolation . \
  -Cbuild-dir="$PWD/build-python-torch-$INSTALLED_TORCH" -Ccmake.define.LAYOUTPROF_WERROR=ON >&2
cd /tmp
check "torch $INSTALLED_TORCH pip-installed: import layoutprof" "$installed/bin/python" -c \
  'import layoutprof, torch; print("layoutprof", layoutprof.__version__, "torch", torch.__version__)'
check "torch $INSTALLED_TORCH pip-installed: layoutprof --version" "$installed/bin/layoutprof" --version
check "torch $INSTALLED_TORCH pip-installed: the native module (tests/python/abi_checks.py)" \
  "$installed/bin/python" "$OLDPWD/tests/python/abi_checks.py"
check "torch $INSTALLED_TORCH pip-installed: python -m layoutprof script.py" bash -c \
  "'$installed/bin/python' -m layoutprof --quiet --json /tmp/package-script.json '$OLDPWD/tests/python/block_script.py' &&
   python3 '$OLDPWD/tests/python/block_script.py' --check /tmp/package-script.json"
check "torch $INSTALLED_TORCH pip-installed: torch.compile's records (tests/python/compiled_checks.py)" env \
  PYTHONPATH="$OLDPWD/samples" "$installed/bin/python" "$OLDPWD/tests/python/compiled_checks.py" \
  alternating_layouts nchw_no_freezing graph_break
cd "$OLDPWD"

# The sdist: what building needs (pyproject.toml's sdist.exclude), installed with the same
# command into a venv that sees the tested torch.
sdist=$LAYOUTPROF_CACHE/sdist-check
rm -rf "$sdist" && mkdir -p "$sdist"
echo "=== python -m build --sdist; pip install --no-build-isolation the unpacked sdist ===" >&2
"$venv/bin/pip" install -q --disable-pip-version-check build >&2
"$venv/bin/python" -m build --sdist --no-isolation -o "$sdist" . >&2
tar xzf "$sdist"/layoutprof-*.tar.gz -C "$sdist"
tree=$(echo "$sdist"/layoutprof-*/)
"$(dirname "$(readlink -f "$TORCH_PY")")/python3" -m venv "$sdist/venv"
site "$TORCH_PY" >"$(site "$sdist/venv/bin/python")/layoutprof-torch.pth"
"$sdist/venv/bin/pip" install -q --disable-pip-version-check scikit-build-core >&2
(cd "$tree" && CCACHE_BASEDIR=$tree "$sdist/venv/bin/pip" install -q --disable-pip-version-check \
  --no-build-isolation . -Cbuild-dir="$tree/build-python" -Ccmake.define.LAYOUTPROF_WERROR=ON >&2)
cd /tmp
isolated() {  # pip's build isolation hides the venv's torch: the build stops, naming the flag in one line
  ! "$venv/bin/pip" install --disable-pip-version-check "$OLDPWD" -Cbuild-dir=/tmp/layoutprof-isolated \
    >/tmp/package-isolated.log 2>&1 &&
    grep "^ *layoutprof: .* cannot import torch (pip's build isolation hides the venv's torch): pip install --no-build-isolation, in a venv with torch$" /tmp/package-isolated.log
}
check "under pip's build isolation: stops, naming --no-build-isolation" isolated
check "sdist: no tests, samples or build folders in it" bash -c \
  "! tar tzf '$sdist'/layoutprof-*.tar.gz | grep -E '/(tests|samples|build[^/]*)/' && tar tzf '$sdist'/layoutprof-*.tar.gz | grep -q '/LICENSE$'"
check "sdist installed: python -m layoutprof script.py" bash -c \
  "'$sdist/venv/bin/python' -m layoutprof --quiet --json /tmp/package-sdist.json '$OLDPWD/tests/python/block_script.py' &&
   python3 '$OLDPWD/tests/python/block_script.py' --check /tmp/package-sdist.json"
check "sdist installed: the native module (tests/python/abi_checks.py)" "$sdist/venv/bin/python" "$OLDPWD/tests/python/abi_checks.py"
cd "$OLDPWD"

# Python 3.12: a venv of its own with the tested torch release from the package index (kept
# under LAYOUTPROF_CACHE and reused), the package built with the same install command against the
# LibTorch of that release in the tested wheel's venv (LAYOUTPROF_TORCH_FROM: the C++ objects
# are the first build's, from ccache; only the files that include Python's headers compile anew),
# then the in-process checks under 3.12.
python312() {  # pyenv's 3.12, else a python3.12 on PATH that is one
  local p
  for p in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 "$(command -v python3.12 || true)"; do
    [ -x "$p" ] && "$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null && { echo "$p"; return; }
  done
}
py312=$(python312)
if [ -z "$py312" ]; then
  echo "package: skipped: Python 3.12 (no python3.12 under ~/.pyenv/versions or on PATH)"
else
  v312=$LAYOUTPROF_CACHE/venv-py3.12-torch-${TORCH_VERSION%%+*}
  if [ ! -f "$v312/.complete" ]; then
    echo "=== $v312: $LAYOUTPROF_WHEEL for $py312 (once; several GB) ===" >&2
    rm -rf "$v312" && "$py312" -m venv "$v312"
    # shellcheck disable=SC2086
    "$v312/bin/pip" install -q --disable-pip-version-check $LAYOUTPROF_WHEEL 2>&1 | grep -v "is ignored" >&2 || true
    "$v312/bin/python" -c "import torch, sys; sys.exit(torch.__version__ != '$TORCH_VERSION')" && touch "$v312/.complete"
  fi
  model_libraries "$v312"
  "$v312/bin/pip" install -q --disable-pip-version-check scikit-build-core pytest 2>&1 | grep -v "is ignored" >&2 || true
  echo "=== Python 3.12: pip install --no-build-isolation . ===" >&2
  "$v312/bin/pip" install -q --disable-pip-version-check --no-build-isolation . -Cbuild-dir="$PWD/build-python-py3.12" \
    -Ccmake.define.LAYOUTPROF_WERROR=ON -Ccmake.define.LAYOUTPROF_TORCH_FROM="$TORCH_PY" 2>&1 | grep -v "is ignored" >&2 || true
  cd /tmp
  check "Python 3.12: the native module (tests/python/abi_checks.py)" "$v312/bin/python" "$OLDPWD/tests/python/abi_checks.py"
  check "Python 3.12: in-process recording (pytest tests/python/test_in_process.py)" \
    pytest "$v312/bin/python" test_in_process.py
  cd "$OLDPWD"
fi

# The Python's lint, pyproject.toml's rules, from a venv of its own kept outside the clone.
lint=$LAYOUTPROF_CACHE/venv-lint
[ -x "$lint/bin/ruff" ] || { python3 -m venv "$lint" && "$lint/bin/pip" install -q --disable-pip-version-check ruff mypy >&2; }
check "ruff (pyproject.toml's rules) on the package, scripts, tests and samples" \
  "$lint/bin/ruff" check --no-cache src/python scripts tests samples
check "mypy --strict on the package's public modules (pyproject.toml; torch's sources not followed)" \
  "$lint/bin/mypy" --cache-dir "$LAYOUTPROF_CACHE/mypy"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
