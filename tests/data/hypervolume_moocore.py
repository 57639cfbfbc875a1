#!/usr/bin/env python3
"""Expected values for tests/hypervolume.rs from an independent implementation, moocore
(the C library of Fonseca, Lopez-Ibanez et al.): `pip install moocore`, then run this script.

The point sets come from a formula that Rust reproduces bit for bit: coordinate j of point i
(i = 1, 2, ...) is 0.25 + frac(i * ALPHA[d][j]) (the R_d low-discrepancy sequence; the
product, frac and sum are exact/correctly rounded in both languages), and the vector is divided by its
Euclidean norm (x*x summed left to right, then sqrt), which puts every point on the positive
part of the unit sphere, so no point dominates another. The "mixed" set adds, for every 7th
point, a copy scaled by 1.01 (dominated by exactly that point) and, for every 11th, an exact
duplicate.

Without the 0.25 offset point 2i is (up to rounding) point i whenever all of frac(i*alpha_j)
are below 1/2, so the set is full of near-duplicates a few ulps apart ("raw" set below). On
that set moocore 0.3.2's hv_contributions disagrees with its own HV(S) - HV(S minus p) by up
to 5.7e-7 (default) or 1.5e-8 (ignore_dominated=False), so for it the script prints the
differences of hypervolumes instead.

Usage: hypervolume_moocore.py [--csv FILE]   (--csv writes the 10,000-point 3-D set)
"""
import math
import sys
import timeit

import moocore
import numpy as np

ALPHA = {
    3: [0.8191725133961644, 0.671043606703789, 0.5497004779019701],
    4: [0.8566748838545029, 0.733891856627126, 0.6287067210378086, 0.53859725722361],
    5: [0.8812714616335696, 0.7766393890897683, 0.6844301295853427, 0.6031687406857283,
        0.5315553977157914],
}


def sphere(n, d, offset=0.25):
    points = []
    for i in range(1, n + 1):
        v = [offset + (i * a) % 1.0 for a in ALPHA[d]]
        norm = math.sqrt(sum(x * x for x in v))
        points.append([x / norm for x in v])
    return points


def mixed(n):
    points = []
    for i, p in enumerate(sphere(n, 3)):
        points.append(p)
        if i % 7 == 0:
            points.append([x * 1.01 for x in p])
        if i % 11 == 0:
            points.append(list(p))
    return points


def show(name, points, ref, indices):
    x = np.array(points)
    hv = moocore.hypervolume(x, ref=ref)
    # The default mode is the dedicated algorithm but ignores dominated points (they would not
    # cut their dominator's contribution); use the exact (subtracting) mode only when needed.
    exact_mode = not moocore.is_nondominated(x).all()
    hvc = moocore.hv_contributions(x, ref=ref, ignore_dominated=not exact_mode)
    print(f"{name}: n={len(points)} hv={hv:.17g} sum_contributions={math.fsum(hvc):.17g}")
    for i in indices:
        diff = hv - moocore.hypervolume(np.delete(x, i, 0), ref=ref)
        print(f"  contribution[{i}]={hvc[i]:.17g} (hv - hv_without: {diff:.17g})")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--csv":
        with open(sys.argv[2], "w") as f:
            f.write("f1,f2,f3\n")
            for p in sphere(10_000, 3):  # the set of sphere3_10000
                f.write(",".join(repr(v) for v in p) + "\n")
        return
    big = sphere(10_000, 3)
    show("sphere3_10000", big, [1.1] * 3, [0, 1, 4999, 9999])
    show("mixed3_1800", mixed(1_800), [1.1] * 3, [0, 1, 2, 3, 7, 100])
    show("sphere4_300", sphere(300, 4), [1.1] * 4, [0, 1, 150, 299])
    show("sphere5_200", sphere(200, 5), [1.1] * 5, [0, 1, 100, 199])
    raw = np.array(sphere(10_000, 3, offset=0.0))
    hv = moocore.hypervolume(raw, ref=[1.1] * 3)
    hvc = moocore.hv_contributions(raw, ref=[1.1] * 3)
    print(f"raw3_10000: hv={hv:.17g}")
    for i in [2222, 9979, 6915]:
        diff = hv - moocore.hypervolume(np.delete(raw, i, 0), ref=[1.1] * 3)
        print(f"  hv - hv_without[{i}]={diff:.17g} (hv_contributions says {hvc[i]:.17g})")
    x = np.array(big)
    runs = timeit.repeat(lambda: moocore.hypervolume(x, ref=[1.1] * 3), number=1, repeat=21)
    print(f"moocore.hypervolume 10,000 x 3-D: median {sorted(runs)[10] * 1e3:.3f} ms (in-process)")
    runs = timeit.repeat(lambda: moocore.hv_contributions(x, ref=[1.1] * 3), number=1, repeat=11)
    print(f"moocore.hv_contributions 10,000 x 3-D: median {sorted(runs)[5] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
