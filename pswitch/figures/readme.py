"""The README's figures: the demo's transcript and pictures."""

from pswitch.figures._make import Figure, pswitch, transcript, value

DEMO = ("demo",)
HEX_DEMO = ("demo", "--mesh", "hexagonal", "--ports", "16", "--plots", "plots")
#: The compute column of the demo's timeline, and its compilation line.
DEMO_TIMINGS = (r"^   [a-z -]+?\s+(\d+\.\d+) s\s+\d", r"compiled on first use: (.*)$")

FIGURES = {
    "demo": Figure("README.md", transcript(DEMO, prompt=False, timed=True), DEMO_TIMINGS),
    "demo-hexagonal": Figure(
        "README.md",
        value(HEX_DEMO, r"hexagonal mesh, (\d+) cells", "{} cells"),
        files={"docs/demo/mesh.png": "plots/mesh.png", "docs/demo/powers.png": "plots/powers.png"},
        folder=lambda: pswitch(*HEX_DEMO)[1],
    ),
}
