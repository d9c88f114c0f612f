"""PyTorch's own warnings about layouts that change results, as the user's process shows them.

An in-place write on an expanded tensor that PyTorch lets through with a warning ("Use of
masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing this
operation.", index_put_ and others alike) is shown at the user's line. LayoutWarnings listens from
the session's start (the first time a line warns may be a warm-up step) and keeps each warning's
line and first line of text; the report attributes it to the hazard at that line.
"""
import linecache

_MARKS = ("on expanded tensors is deprecated", "refers to a single memory location")


class LayoutWarnings:
    """Keeps PyTorch's layout warnings it hears (a WarningTap's listener)."""

    def __init__(self):
        self.seen = []  # (file:line, the code on it, the warning's first line), each line once

    def heard(self, message, filename, lineno):
        text = str(message).splitlines()[0] if str(message) else ""
        where = f"{filename}:{lineno}"
        if any(m in text for m in _MARKS) and all(w != where for w, _, _ in self.seen):
            self.seen.append((where, linecache.getline(filename, lineno).strip(), text))
