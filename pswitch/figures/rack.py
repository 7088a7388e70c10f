"""The figures of ``docs/rack.md``: each study's transcript and pictures, from seeded runs."""

from pswitch.figures._make import Figure, pswitch, transcript, value

PAGE = "docs/rack.md"
FAILOVER = ("rack", "failover", "--plot", "failover.png")
SLICING = ("rack", "slicing", "--plot", "slicing.png")
RAILS = ("rack", "rails", "--plot", "rails.png")
STRAGGLER = ("rack", "straggler")
PRODUCT_RAILS = ("rack", "rails", "--driver", "product", "--verify", "0")


def _picture(argv: tuple[str, ...], name: str, slow: bool = False) -> Figure:
    return Figure(
        PAGE,
        transcript(argv),
        files={f"docs/rack_{name}.png": f"{name}.png"},
        folder=lambda: pswitch(*argv)[1],
        slow=slow,
    )


FIGURES: dict[str, Figure] = {
    "rack-failover": _picture(FAILOVER, "failover"),
    "rack-slicing": _picture(SLICING, "slicing", slow=True),  # its trace at every class
    "rack-rails": _picture(RAILS, "rails"),
    "rack-straggler": Figure(PAGE, transcript(STRAGGLER)),
    "rack-failover-ratio": Figure(PAGE, value(FAILOVER, r"best electrical: ([\d.]+x)")),
    "rack-slicing-verified": Figure(
        PAGE, value(SLICING, r"switch: (\d+ of \d+) configurations verified"), slow=True
    ),
    "rack-slicing-hex-verified": Figure(
        PAGE, value(SLICING, r"2x4x4 torus\).*\n.*switch: (\d+ of \d+) configurations"), slow=True
    ),
    "rack-slicing-worst": Figure(
        PAGE, value(SLICING, r"configurations verified \(worst isolation ([\d.]+ dB)"), slow=True
    ),
    "rack-straggler-trace": Figure(PAGE, value(STRAGGLER, r"throughput ([\d.]+x) ring's")),
    "rack-rails-product": Figure(
        PAGE, value(PRODUCT_RAILS, r"optical per phase [\d.]+ ms \(([\d.]+x)\)")
    ),
}
