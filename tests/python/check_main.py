"""The command line of a check module run alone: check(fail, names) over the names given."""
import sys


def run_alone(check):
    """Runs check(fail, argv names), prints each failure, and exits 1 if there was one."""
    failures = []
    check(failures.append, sys.argv[1:])
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)
