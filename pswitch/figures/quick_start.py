"""The README's quick start: how long the install's warm-up and ``make test`` take, measured by
``benchmarks/bench_cli.py`` (``make test`` in a clean clone)."""

from pswitch.figures._make import ALL, Figure, benchmark, timed

#: One clean clone for both figures (the warm-up is timed on the way to make test).
ONLY = ("--only", "warm_s,make_test_s,longest_test_silence_s")

FIGURES = {
    "quick-start-make-test": Figure(
        "README.md", timed(lambda: benchmark("cli", *ONLY)["make_test_s"]), ALL, slow=True
    ),
    "quick-start-warm": Figure(
        "README.md", timed(lambda: benchmark("cli", *ONLY)["warm_s"]), ALL, slow=True
    ),
}
