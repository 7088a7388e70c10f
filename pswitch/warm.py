"""``python -m pswitch.warm``: compile the numba kernels into their on-disk cache, so that no
command compiles on first use (:mod:`photonics.warm`). The Makefile's install step runs it."""

from __future__ import annotations

from photonics.warm import compiling, kernels, warm


def main() -> int:
    with compiling() as compiled:
        warm()
    cache = next(iter(kernels().values())).stats.cache_path
    if compiled.kernels:
        print(
            f"compiled {compiled.kernels} kernel signatures in {compiled.seconds:.1f} s into "
            f"numba's cache, {cache}"
        )
    else:
        print(f"kernels already compiled (numba's cache, {cache})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
