"""The demo's mesh plot of a feed-forward mesh: bar/cross legend (no colour bar), numbered ports,
each pair's light drawn from its input to its output, cells on a circuit thick, the matching in
the title."""

import matplotlib

matplotlib.use("Agg")

import numpy as np

from photonics.chips import topologies
from photonics.matching import Matching
from pswitch.demo import _feedforward_mesh_figure


def test_the_clements_plot_draws_each_circuits_light_to_its_output_and_names_the_matching(
    tmp_path,
) -> None:
    fabric = topologies.topology("clements").fabric(8)
    plan = fabric.plan(Matching([(0, 5), (2, 3)], 8))  # ports 1, 4, 6, 7 dark
    fig = _feedforward_mesh_figure(fabric.mesh, plan.theta, plan)
    (ax,) = fig.axes  # one axes: no colour bar for a two-state quantity
    assert "matching 0-5 2-3" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"bar", "cross", "on a circuit", "parked"} <= set(legend)
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted([str(p) for p in range(8)] * 2)  # inputs left, outputs right
    # every circuit's light is drawn, ends at its target's output, and shares its pair's colour
    light = {int(line.get_gid().split()[1]): line for line in ax.lines if line.get_gid()}
    assert sorted(light) == [0, 2, 3, 5]
    for circuit in plan.circuits:
        assert light[circuit.source].get_ydata()[-1] == circuit.target
    colour = {s: tuple(line.get_color()) for s, line in light.items()}
    assert colour[0] == colour[5] != colour[2] == colour[3]
    # thick exactly where a circuit crosses the MZI, coloured by its state
    mzis = [line for line in ax.lines if line.get_gid() is None and len(line.get_xdata()) == 2]
    mzis = [line for line in mzis if line.get_xdata()[0] == line.get_xdata()[1]]
    assert len(mzis) == fabric.mesh.n_mzis
    used = sorted({k for c in plan.circuits for k in c.cells})
    assert [k for k, line in enumerate(mzis) if line.get_linewidth() > 2] == used
    cross = np.sin(plan.theta) ** 2 > 0.5
    assert [line.get_color() for line in mzis] == ["tab:orange" if c else "tab:blue" for c in cross]
    fig.savefig(tmp_path / "mesh.png")
