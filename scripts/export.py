#!/usr/bin/env python3
"""scripts/export.py: the package's exporter, src/python/layoutprof/export.py (`python -m
layoutprof.export` where the package is installed), run from a clone under any torch, the
model's own, without importing the package. Its usage and exit status: that file's docstring."""
import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))
runpy.run_path(os.path.join(HERE, "..", "src", "python", "layoutprof", "export.py"), run_name="__main__")
