"""The README's quick start: how long the install's warm-up and ``make test`` take, measured by
``benchmarks/bench_cli.py`` (``make test`` in a clean clone)."""

from pswitch.figures._make import ALL, Figure, benchmark, timed

FIGURES = {
    "quick-start-make-test": Figure(
        "README.md",
        timed(lambda: benchmark("cli", "--only", "make_test_s")["make_test_s"]),
        ALL,
        slow=True,
    ),
    "quick-start-warm": Figure(
        "README.md", timed(lambda: benchmark("cli", "--only", "warm_s")["warm_s"]), ALL, slow=True
    ),
}
