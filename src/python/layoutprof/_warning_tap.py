"""One warnings.showwarning hook for a profile's listeners (DDP's grad-strides warning, PyTorch's
layout warnings): each warning the process shows is passed to every listener's
heard(message, filename, lineno), then shown as before. One hook, so that removing it restores
exactly what was there, whatever the listeners."""
import warnings


class WarningTap:
    def __init__(self, *listeners):
        self._listeners = listeners
        self._shown = None

    def install(self):
        self._shown = shown = warnings.showwarning
        listeners = self._listeners

        def show(message, category, filename, lineno, file=None, line=None):
            for listener in listeners:
                listener.heard(message, filename, lineno)
            return shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show

    def remove(self):
        if self._shown is not None:
            warnings.showwarning = self._shown
            self._shown = None
