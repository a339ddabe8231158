"""A time limit on a step of a worker, for a hang in Python code (the supervisor's timeout
is the backstop for one inside native code)."""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Any, Iterator

# After the limit, the error is raised again every RETRY_S seconds until the step ends: an
# error raised where Python cannot pass it on is lost (in a finalizer, in a generator the
# collector closes, under the user's bare `except:` around a loop), and the step would then
# run on unbounded. Unwinding from the first raise takes far less than this.
RETRY_S = 1.0


class Overrun(BaseException):
    """A step ran past its time. Not an Exception: the `except Exception` of the user's code
    (or of the code the step interrupts) must let it through."""


@contextlib.contextmanager
def time_limit(seconds: float | None, error: type[Overrun] = Overrun) -> Iterator[None]:
    """Raise `error` in this thread after `seconds`, and again every `RETRY_S` until the
    block ends. A no-op without a positive limit, off the main thread (signals reach only the
    main thread) or where SIGALRM does not exist."""
    if not seconds or seconds <= 0 or not hasattr(signal, "setitimer") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise error(f"no result within {seconds:g} s")

    previous_hook = sys.unraisablehook

    def lost(unraisable: Any) -> None:
        # an overrun raised in a finalizer is raised again: nothing to report, and a hook
        # that formats a traceback (reading source files) can itself be cut by the next one
        if not isinstance(unraisable.exc_value, error):
            previous_hook(unraisable)

    previous = signal.signal(signal.SIGALRM, expire)
    sys.unraisablehook = lost
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = previous_hook


__all__ = ["Overrun", "RETRY_S", "time_limit"]
