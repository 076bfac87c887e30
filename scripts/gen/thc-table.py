#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""THC's optimal lookup table T_{b,g,p} (THC, NSDI'24, section 5.2 and
appendix B), the reference generator for userspace/collective/thc.c.

The table maps the 2^b indices a worker sends to points of the uniform
grid {0..g} over [-t_p, t_p], t_p = Phi^-1(1 - p/2), with T[0] = 0 and
T[2^b - 1] = g, strictly increasing. It minimises the expected squared
error of stochastic quantisation (round to one of the two neighbouring
table points, unbiased) of A ~ N(0, 1) conditioned on |A| <= t_p:

    sum over z of cost(T[z], T[z+1]),
    cost(i, j) = integral over [a_i, a_j] of (a - a_i)(a_j - a) phi(a) da

((a - a_i)(a_j - a) is the variance of unbiased rounding between a_i and
a_j; conditioning only scales the objective). The objective is a sum over
consecutive table points, so a dynamic programme over (index, grid point)
finds the exact optimum in O(2^b g^2); --verify compares it with the
paper's exhaustive stars-and-bars enumeration (Algorithm 4) on small
(b, g). Ties (a table and its mirror g - T when g is even) go to the
lexicographically smallest table among those within 1e-9 (relative) of
the optimum, so that libm differences in the last bits cannot change the
choice. thc.c runs the same programme in C at init; the selftests
compare both with the committed output of this script:

    scripts/gen/thc-table.py --header > selftests/collective/thc_tables.h
    scripts/gen/thc-table.py -b 4 -g 30 -p 0.03125
    scripts/gen/thc-table.py --verify
"""
import argparse
import math
import sys
from typing import Iterator, List, Sequence, Tuple

TIE = 1e-9

# the committed reference tables: the default (b=4, g=30, p=1/32), the
# paper's other configurations (g=36, p=1/32; g=20, p=1/512; g=51) and a
# few small ones
REF: List[Tuple[int, int, float]] = [
    (4, 30, 1 / 32), (4, 36, 1 / 32), (4, 20, 1 / 512), (4, 51, 1 / 1024),
    (4, 15, 1 / 32), (2, 4, 1 / 32), (2, 10, 1 / 8), (1, 1, 1 / 32),
    (8, 255, 1 / 32), (4, 255, 1 / 1024),
]


def t_of_p(p: float) -> float:
    """t_p = Phi^-1(1 - p/2), by bisection on the upper tail
    0.5 erfc(t / sqrt 2) down to adjacent doubles (accurate for tiny p,
    where 1 - p/2 would round; thc.c does the same)."""
    lo, hi = 0.0, 40.0
    while True:
        mid = lo + (hi - lo) / 2
        if mid <= lo or mid >= hi:
            return mid
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > p / 2:
            lo = mid
        else:
            hi = mid


def _phi(a: float) -> float:
    return math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)


def _cdf(a: float) -> float:
    return 0.5 * math.erfc(-a / math.sqrt(2.0))


def costs(g: int, t: float) -> List[List[float]]:
    """cost[i][j] for grid points i < j (closed form, see module doc)."""
    a = [-t + 2.0 * t * i / g for i in range(g + 1)]
    ph = [_phi(x) for x in a]
    cd = [_cdf(x) for x in a]
    c = [[0.0] * (g + 1) for _ in range(g + 1)]
    for i in range(g + 1):
        for j in range(i + 1, g + 1):
            c0, c1 = a[i], a[j]
            v = (-(1.0 + c0 * c1) * (cd[j] - cd[i])
                 - c0 * ph[j] + c1 * ph[i])
            c[i][j] = max(v, 0.0)
    return c


def check_params(b: int, g: int, p: float) -> None:
    if b not in (1, 2, 4, 8):
        raise ValueError("bits %d: must be 1, 2, 4 or 8" % b)
    if not (1 << b) - 1 <= g <= 255:
        raise ValueError("granularity %d: must be in [2^b - 1, 255] = [%d, 255]"
                         % (g, (1 << b) - 1))
    if not 1e-9 <= p <= 0.5:
        raise ValueError("p %g: must be in [1e-9, 0.5]" % p)


def solve(b: int, g: int, p: float) -> Tuple[List[int], float]:
    """The optimal table and its cost (unnormalised)."""
    check_params(b, g, p)
    return _solve(b, g, p)


def _solve(b: int, g: int, p: float) -> Tuple[List[int], float]:
    k = 1 << b
    c = costs(g, t_of_p(p))
    inf = float("inf")
    # go[m][j]: the least cost from table point m at grid point j to the
    # end (point k - 1 at g)
    go = [[inf] * (g + 1) for _ in range(k)]
    go[k - 1][g] = 0.0
    for m in range(k - 2, -1, -1):
        for j in range(g + 1):
            best = inf
            for nx in range(j + 1, g + 1):
                v = c[j][nx] + go[m + 1][nx]
                if v < best:
                    best = v
            go[m][j] = best
    opt = go[0][0]
    lim = opt * (1.0 + TIE) + 1e-300
    table = [0]
    acc = 0.0
    for m in range(1, k):
        j = table[-1]
        for nx in range(j + 1, g + 1):
            if acc + c[j][nx] + go[m][nx] <= lim:
                table.append(nx)
                acc += c[j][nx]
                break
        else:
            raise AssertionError("no table point within the tolerance")
    return table, opt


def table_cost(table: Sequence[int], c: List[List[float]]) -> float:
    return sum(c[table[z]][table[z + 1]] for z in range(len(table) - 1))


def stars_and_bars(n: int, k: int) -> Iterator[List[int]]:
    """The paper's Algorithm 4: every way to put n balls into k bins."""
    bins = [0] * k
    bins[0] = n
    yield list(bins)
    for _ in range(1, math.comb(n + k - 1, k - 1)):
        a = min(i for i in range(k) if bins[i] > 0)
        bins[a + 1] += 1
        s = bins[a] - 1
        bins[a] = 0
        bins[0] = s
        yield list(bins)


def brute(b: int, g: int, p: float) -> float:
    """The least cost over all tables (appendix B's enumeration)."""
    k = 1 << b
    c = costs(g, t_of_p(p))
    best = float("inf")
    for bins in stars_and_bars(g - (k - 1), k - 1):
        table = [0]
        for d in bins:
            table.append(table[-1] + 1 + d)
        best = min(best, table_cost(table, c))
    return best


def verify() -> None:
    cases = [(1, g, p) for g in (1, 2, 5) for p in (1 / 32, 0.5)]
    cases += [(2, g, p) for g in range(3, 21) for p in (1 / 32, 1 / 512)]
    cases += [(3, g, 1 / 32) for g in (7, 8, 11, 16, 19)]
    cases += [(4, g, 1 / 32) for g in (15, 16, 18, 20)]
    for b, g, p in cases:
        table, opt = _solve(b, g, p)
        c = costs(g, t_of_p(p))
        bf = brute(b, g, p)
        tc = table_cost(table, c)
        if abs(tc - bf) > TIE * bf or abs(opt - bf) > TIE * bf:
            raise AssertionError("b=%d g=%d p=%g: dp %r (%.17g) brute %.17g"
                                 % (b, g, p, table, tc, bf))
        if len(set(table)) != 1 << b or sorted(table) != table:
            raise AssertionError("b=%d g=%d: bad table %r" % (b, g, table))
    print("verified %d (b, g, p) against exhaustive enumeration" % len(cases))


def header() -> str:
    out = ["/* SPDX-License-Identifier: GPL-2.0 */",
           "/* generated by scripts/gen/thc-table.py --header; do not edit */",
           "#ifndef THC_TABLES_H", "#define THC_TABLES_H", "",
           "struct thc_ref_table {", "\tunsigned int bits, gran;",
           "\tdouble p;", "\tunsigned char t[256];", "};", "",
           "static const struct thc_ref_table thc_ref_tables[] = {"]
    for b, g, p in REF:
        table, _ = solve(b, g, p)
        body = ", ".join(str(v) for v in table)
        out.append("\t{ %d, %d, %r, { %s } }," % (b, g, p, body))
    out += ["};", "", "#endif", ""]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", type=int, default=4, help="bits per index")
    ap.add_argument("-g", type=int, default=30, help="granularity")
    ap.add_argument("-p", type=float, default=1 / 32, help="truncation")
    ap.add_argument("--header", action="store_true",
                    help="print the reference tables as a C header")
    ap.add_argument("--verify", action="store_true",
                    help="check the DP against exhaustive enumeration")
    a = ap.parse_args()
    try:
        if a.verify:
            verify()
        elif a.header:
            sys.stdout.write(header())
        else:
            table, opt = solve(a.b, a.g, a.p)
            print("b=%d g=%d p=%r t_p=%.17g cost=%.17g" %
                  (a.b, a.g, a.p, t_of_p(a.p), opt))
            print(" ".join(str(v) for v in table))
    except ValueError as e:
        print("thc-table: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
