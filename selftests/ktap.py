# SPDX-License-Identifier: GPL-2.0 OR MIT
"""KTAP output for the Python selftests: register cases with @ktap.test
and end the script with sys.exit(ktap.run()).

    import ktap

    @ktap.test("what it checks")
    def t_case() -> None:
        assert ...

A case passes unless it raises; its traceback is printed as comments.
The last line is "# Totals: pass:N fail:N ...", which make check counts.
"""

import sys
import traceback
from typing import Callable, List, Tuple

_TESTS: List[Tuple[str, Callable[[], None]]] = []


def test(name: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register the decorated function as the case @name."""
    def add(fn: Callable[[], None]) -> Callable[[], None]:
        _TESTS.append((name, fn))
        return fn
    return add


def run() -> int:
    """Run the cases in order; 1 if any failed, else 0."""
    print("KTAP version 1")
    print(f"1..{len(_TESTS)}")
    fails = 0
    for n, (name, fn) in enumerate(_TESTS, 1):
        try:
            fn()
            print(f"ok {n} {name}")
        except Exception:               # noqa: BLE001 - reported
            fails += 1
            for ln in traceback.format_exc().rstrip().split("\n"):
                print(f"# {ln}")
            print(f"not ok {n} {name}")
        sys.stdout.flush()
    print(f"# Totals: pass:{len(_TESTS) - fails} fail:{fails} xfail:0 "
          "xpass:0 skip:0 error:0")
    return 1 if fails else 0
