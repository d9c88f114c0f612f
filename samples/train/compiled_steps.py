"""A compiled CNN fed NCHW and channels_last batches by turns, as a script to profile unchanged:
python -m layoutprof samples/train/compiled_steps.py (samples/sample_compiled.py's
alternating_layouts: three steps, each marked with layoutprof.step())."""
import sys

import layoutprof

sys.path.insert(0, "samples")  # run from the repository's root
import sample_compiled  # noqa: E402

sample_compiled.alternating_layouts(layoutprof.step)
