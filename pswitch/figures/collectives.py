"""The figures of ``docs/collectives.md``: the 16-rank all-reduce, the sweep, the training step
and the hexagonal split."""

from pswitch.figures._make import Figure, ms, pswitch, tail, transcript, value

HD = ("collective", "halving-doubling", "--ranks", "16", "--bytes", "1GiB", "--plot", "hd.png")
SWEEP = ("collective", "sweep", "--ranks", "16", "--bytes", "16GiB", "--plot", "sweep.png")
TRAIN = (
    "collective", "training-step", "--dp", "2", "--tp", "4", "--pp", "2", "--tp-bytes", "64MiB",
    "--dp-bytes", "1GiB", "--pp-bytes", "16MiB", "--forward-ms", "20", "--backward-ms", "40",
)  # fmt: skip
HD_PARALLEL = (
    "collective",
    "halving-doubling",
    "--ranks",
    "16",
    "--bytes",
    "1GiB",
    "--driver",
    "parallel",
)
HD_PRODUCT = (
    "collective",
    "halving-doubling",
    "--ranks",
    "16",
    "--bytes",
    "1GiB",
    "--driver",
    "product",
)
HD32 = ("collective", "halving-doubling", "--ranks", "32", "--bytes", "1GiB", "--mesh", "hexagonal")
SWEEP_MODEL = ("collective", "sweep", "--ranks", "16", "--bytes", "16GiB", "--switch", "model")
#: The sweep's all-to-all crossover for 16 ranks: the line after its rows of 16 ranks.
SIXTEEN_CROSSOVER = r"^\s+16\s+16 GiB.*\n.*all-to-all \(cover\) above ([\d.e+]+) B"


def _sixteen_ranks(lines: list[str]) -> list[str]:
    """The sweep's header, its rows of 16 ranks and what follows them."""
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("16 "))
    end = next(i for i, line in enumerate(lines) if line.startswith("straggler-aware"))
    return [*lines[:2], *lines[start:end]]


FIGURES: dict[str, Figure] = {
    "collective-hd": Figure(
        "docs/collectives.md",
        transcript(HD),
        files={"docs/collective_gantt.png": "hd.png"},
        folder=lambda: pswitch(*HD)[1],
    ),
    "collective-hd-total": Figure(
        "docs/collectives.md", value(HD, r"total: optical (\d+)\.\d+ ms", "{} ms")
    ),
    "collective-hd-reconfigure": Figure(
        "docs/collectives.md",
        value(HD, r"reconfigurations, (\d+)\.\d+ ms\)", "{} ms"),
    ),
    "collective-hd-electrical": Figure(
        "docs/collectives.md", value(HD, r"ideal electrical (\d+)\.\d+ ms", "{} ms")
    ),
    "collective-hd-ratio": Figure(
        "docs/collectives.md", value(HD, r"ms \((\d+\.\d+)x\); duty", "{}x")
    ),
    "collective-hd-parallel": Figure(
        "docs/collectives.md", value(HD_PARALLEL, r"total: optical (\d+)\.\d+ ms", "{} ms")
    ),
    "collective-hd-electrical-again": Figure(
        "docs/collectives.md", value(HD_PARALLEL, r"ideal electrical (\d+)\.\d+ ms", "{} ms")
    ),
    "collective-hd-product": Figure(
        "docs/collectives.md", value(HD_PRODUCT, r"total: optical (\d+)\.\d+ ms", "{} ms")
    ),
    "collective-sweep": Figure(
        "docs/collectives.md",
        transcript(SWEEP, _sixteen_ranks),
        files={"docs/collective_sweep.png": "sweep.png"},
        folder=lambda: pswitch(*SWEEP)[1],
    ),
    "collective-crossover": Figure(
        "docs/collectives.md", value(SWEEP, SIXTEEN_CROSSOVER, "{} bytes")
    ),
    "collective-training": Figure("docs/collectives.md", transcript(TRAIN, tail(6))),
    "collective-training-dp": Figure(
        "docs/collectives.md", value(TRAIN, r"^\s+dp\s+\d+\s+[\d.]+\s+([\d.]+)", ms)
    ),
    "collective-hd-far": Figure(
        "docs/collectives.md", value(HD, r"^\s+0\s+0\s+reduce-scatter\s+\d+\s+([\d.]+)", ms)
    ),
    "collective-hd-near": Figure(
        "docs/collectives.md", value(HD, r"^\s+3\s+3\s+reduce-scatter\s+\d+\s+([\d.]+)", ms)
    ),
    "collective-sweep-hd-1g": Figure(
        "docs/collectives.md", value(SWEEP, r"^\s+16\s+1 GiB\s+[\d.]+\s+([\d.]+)", ms)
    ),
    "collective-sweep-static-1g": Figure(
        "docs/collectives.md", value(SWEEP, r"^\s+16\s+1 GiB\s+[\d.]+\s+[\d.]+\s+([\d.]+)", ms)
    ),
    "collective-crossover-model": Figure(
        "docs/collectives.md", value(SWEEP_MODEL, SIXTEEN_CROSSOVER)
    ),
    "collective-hd32-steps": Figure(
        "docs/collectives.md",
        value(HD32, r"(\d+) steps,", "{} steps"),
    ),
    "collective-hd32-rounds": Figure(
        "docs/collectives.md", value(HD32, r"(\d+) rounds,", "{} rounds")
    ),
}
