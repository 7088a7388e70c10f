"""The README's tables and sentences made from the benchmarks' JSON (``benchmarks/bench_*.py``,
one run of each per process: every figure written or checked together shares it), and the
formats they quote numbers in."""

from __future__ import annotations

import re
from collections.abc import Callable

from pswitch.figures._make import benchmark

#: The router benchmark as the README runs it: the self-calibrated chips are another page's.
ROUTER = ("router", "--selfcal-chips", "0")
CLEMENTS = "ours ClementsMesh"
SIX = "perms_6x6"


# --- formats ---------------------------------------------------------------------------------


def sig(v: float, digits: int = 3) -> str:
    """``v`` to ``digits`` significant digits, never in scientific notation."""
    text = f"{v:.0f}" if abs(v) >= 10 ** (digits - 1) else f"{v:#.{digits}g}"
    return text.rstrip(".")  # 99.96 to 3 digits is "100.", not 100.0


def t(seconds: float, digits: int = 3) -> str:
    """A time in the unit that suits it: ``113 us``, ``4.68 ms``, ``1.39 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{sig(seconds / scale, digits)} {unit}"
    return f"{sig(seconds / 1e-6, digits)} us"


def x(ratio: float, lower: bool = False) -> str:
    """A speed-up: ``7.8x``, ``298x``, ``11 128x``; ``>`` when it is a lower bound."""
    text = f"{ratio:.1f}" if ratio < 10 else f"{round(ratio):,}".replace(",", " ")
    return f"{'>' if lower else ''}{text}x"


def frac(f: float) -> str:
    """A fraction as the dead-cell sentence quotes it: ``0.73``, ``0``, ``1``."""
    return f"{f:.2f}" if 0 < f < 1 else f"{f:.0f}"


def pct(f: float) -> str:
    """A fraction in per cent, to 3 digits: ``51.7 %``, ``0 %``, ``100 %``."""
    return f"{100 * f:.3g} %"


def exp(err: float) -> str:
    """A small number as the tables write it: ``8.8e-15``."""
    mantissa, power = f"{err:.1e}".split("e")
    return f"{mantissa}e{int(power)}"


# --- the feed-forward benchmark --------------------------------------------------------------


def ff() -> dict:
    """The feed-forward benchmark's figures (``benchmarks/bench_feedforward.py``)."""
    return benchmark("feedforward")


def ours(stage: str, n: int) -> float | None:
    """Our time (s) of ``stage`` at ``n`` ports on the Clements mesh; None when it did not run."""
    r = ff()["ours"][CLEMENTS][stage].get(str(n))
    return r["time_s"] if r and r["status"] == "ok" else None


def fastest(stage: str, n: int) -> tuple[str, float | None, bool]:
    """The fastest peer at ``n``: its name, its time and whether every peer timed out (then
    the time is the timeout, a lower bound); ``("—", None, False)`` when none ran."""
    done = [(p.get(stage, {}).get(str(n)), name) for name, p in ff()["peers"].items()]
    ok = sorted((r["time_s"], name) for r, name in done if r and r["status"] == "ok")
    if ok:
        return ok[0][1], ok[0][0], False
    if any(r and r["status"] in ("timeout", "skipped") for r, _ in done):
        timeout = ff()["config"]["timeout_s"]
        return f"every peer > {t(timeout)}", timeout, True
    return "—", None, False


def speed_cells(stage: str, n: int) -> list[object]:
    """Ours at ``n``, the fastest peer and the speed-up."""
    mine = ours(stage, n)
    name, theirs, lower = fastest(stage, n)
    peer = name if theirs is None or lower else f"{name} {t(theirs)}"
    return [t(mine) if mine else "—", peer, x(theirs / mine, lower) if theirs and mine else "—"]


def speed_rows() -> list[list[object]]:
    """The speed table: a row per size, each stage's time, fastest peer and ratio."""
    sizes = sorted(ff()["config"]["sizes"] + ff()["config"]["ours_only_sizes"])
    stages = ("decompose", "route", "transfer")
    return [[n, *(cell for s in stages for cell in speed_cells(s, n))] for n in sizes]


def library(name: str) -> str:
    """A peer as the summary names it: ``Strawberry Fields 0.23 `rectangular```."""
    peer, method = ff()["peers"][name], name.split(" ", 1)[1]
    full = {"strawberryfields": "Strawberry Fields"}.get(peer["library"], peer["library"])
    version = ".".join((peer["version"] or "").split(".")[:2])
    return f"{full} {version} `{method}`".replace("  ", " ")


def peer_row(task: str, stage: str, how: str = "") -> list[object]:
    """A summary row of the feed-forward benchmark: ours at n = 128 against the fastest peer."""
    mine = ours(stage, 128) or 0.0
    name, theirs, lower = fastest(stage, 128)
    if theirs is None or lower:
        return [task, t(mine), name, x(theirs / mine, True) if theirs and mine else "—"]
    return [task, t(mine), f"{library(name)}{how}, {t(theirs)}", x(theirs / mine)]


def targets() -> str:
    """The feed-forward targets, met or not, with this run's figures (the targets are the
    benchmark's: ``feedforward_report.targets``)."""
    s = ff()
    missed = [d for d, v in s["targets"].items() if v["verdict"] != "PASS"]
    head = f"Targets missed: {'; '.join(missed)}" if missed else "Targets met"

    def up(key: str) -> str:
        return x(s[key] or 0, bool(s[f"{key}_lower_bound"]))

    return (
        f"{head}: decomposition at n = 128 is {up('decompose_speedup_128')} faster than the "
        f"fastest peer (target 100x), takes {t(s['decompose_s_256'], 2)} at n = 256 (target "
        f"0.1 s) and {t(s['decompose_s_512'], 2)} at n = 512 (1 s); routing takes "
        f"{t(s['route_s_256'], 2)} at n = 256 (5 ms) and is {up('route_speedup_128')} faster "
        f"than a peer's decomposition at n = 128 (1000x); the transfer is "
        f"{up('transfer_speedup_128')} faster than the fastest peer at n = 128 (20x) and takes "
        f"{t(s['transfer_s_256'], 2)} at n = 256 (50 ms)."
    )


# --- the router benchmark --------------------------------------------------------------------


def router() -> dict:
    """The router benchmark's figures, from the run the README quotes (:data:`ROUTER`)."""
    return benchmark(*ROUTER)


def router_text(template: str) -> Callable[[], str]:
    """A value of the router benchmark: ``template`` formatted with its figures (``six`` the
    cells six paths of the 6x6 switch cross, on average)."""
    return lambda: template.format(**router(), six=6 * router()[SIX]["path_cells_mean"])


PATHS = (
    "{perms_6x6[path_cells_min]}-{perms_6x6[path_cells_max]} cells "
    "({perms_6x6[path_cells_mean]:.1f} on average)"
)
CROSSINGS = "{perms_6x6[path_cells_mean]:.1f} cells make {six:.0f} cell crossings"


def router_rows() -> list[list[object]]:
    """The router table: the 6x6 permutations, a 32-port matching and the cover."""
    r = router()
    six, m32, cover = r["perms_6x6"], r["matching_32"], r["cover"]
    best = "the optimum" if cover["size"] == cover["optimum"] else f"optimum {cover['optimum']}"
    each = t(six["ours_per_config_ms"] / 1e3, 2)
    return [
        [f"{six['n']} permutations of the 6x6 switch (isolation-aware)",
         f"{six['ours_routed']} routed in {t(six['ours_s'], 2)} ({each} each)",
         f"{six['baseline_routed']} routed in {t(six['baseline_s'], 2)}", "< 10 s"],
        [f"one 32-port matching on the 9x9 mesh (median of {m32['n']})",
         f"{t(m32['ours_median_s'])}, {m32['ours_routed']}/{m32['n']} routed",
         f"{t(m32['baseline_median_s'])}, {m32['baseline_routed']}/{m32['n']}", "< 50 ms"],
        ["all-to-all cover of 32 endpoints",
         f"{cover['size']} matchings ({best}) in {t(cover['seconds'], 2)}", "", "< 5 s"],
    ]  # fmt: skip


def dead_cells() -> str:
    """The dead-cell sentence: the fraction still routable for each k, ours and the baseline's."""
    rows, sets = router()["dead_cells"], router()["settings"]["dead_sets"]

    def each(key: str) -> str:
        return " / ".join(frac(r[key]) for r in rows)

    ks = " / ".join(str(r["k"]) for r in rows)
    return (
        f"{sets} sets of dead cells, {rows[0]['matchings']} matchings per k): "
        f"{each('ours_fraction')} for k = {ks} (baseline {each('baseline_fraction')})"
    )


def isolation_rows() -> list[list[object]]:
    """The isolation table: plain and isolation-aware routing on the typical cells."""
    r = router()
    typical = r["isolation"]["typical_35_db"]
    plain, aware = typical["plain"], typical["aware_typical"]
    cover, cover_25 = r["cover"], r["cover_25db"]
    six, all_six = plain["6x6"], aware["6x6"]["ge_25_db_fraction"]
    met = pct(all_six) if all_six < 1 else f"**{pct(all_six)}**"  # every one: bold
    return [
        [f"{six['configs']} permutations of the 6x6 switch, >= 25 dB",
         f"{pct(six['ge_25_db_fraction'])} (worst {six['worst_db']:.1f} dB)",
         f"{met} (worst {aware['6x6']['worst_db']:.1f} dB)"],
        [f"{plain['32']['configs']} random perfect matchings of 32 endpoints, >= 25 dB",
         f"{pct(plain['32']['ge_25_db_fraction'])} (median {plain['32']['median_db']:.1f} dB)",
         f"{pct(aware['32']['ge_25_db_fraction'])} (median {aware['32']['median_db']:.1f} dB)"],
        ["all-to-all cover of 32 endpoints",
         f"{cover['size']} matchings, worst {cover['verified_worst_isolation_db']:.1f} dB",
         f"{cover_25['size']} matchings, worst "
         f"**{cover_25['verified_worst_isolation_db']:.1f} dB**, {t(cover_25['seconds'], 2)}"],
    ]  # fmt: skip


def published() -> str:
    """The 6x6 permutations at >= 25 dB on cells of the published spread, by router."""
    rows = router()["isolation"]["published_32_44_db"]
    share = [pct(rows[k]["6x6"]["ge_25_db_fraction"]) for k in rows]
    return (
        f"{share[2]} of the permutations at >= 25 dB when it knows, {share[1]} when it assumes "
        f"35 dB everywhere, {share[0]} routed plainly"
    )


def summary_sentences() -> str:
    s, six = ff(), router()["perms_6x6"]
    worst = router()["isolation_6x6_typical_worst_db"]
    n = six["n"]
    routed = f"all {n}" if six["ours_routed"] == n else f"{six['ours_routed']} of the {n}"
    return (
        f"The decomposition error is at most {exp(s['decompose_err_max'])} at every n up to "
        f"512 (both meshes), where a decomposition takes {t(s['decompose_s_512'], 2)}. The "
        f"router also routes "
        f"{routed} permutations of the 6x6 switch (each at >= 25 dB isolation on typical cells, "
        f"worst {worst:.1f} dB), where the baseline routes {six['baseline_routed']}."
    )


# --- failover, layouts, programming and instruments ------------------------------------------


def failover_rows() -> list[list[object]]:
    """The failover table: a row per mesh and placement of the spares."""
    rows = benchmark("failover")["failover"]
    names = {"clements": "Clements", "hexagonal": "hexagonal (9x9)"}
    where = {"interleaved": "after every 7 ports", "end": "last 4 ports"}
    out: list[list[object]] = []
    for mesh, placement in [(m, p) for m in names for p in where]:
        r = rows[f"{mesh}/{placement}"]
        hit, most = r["disturbed_circuits"], r["disturbed_circuits_max"]
        out.append([
            names[mesh], where[placement], t(r["failover_compute_s"], 2),
            t(r["failover_modeled_s"], 2),
            f"{r['changed_cells']:.0f} ({r['naive_changed_cells']:.0f})",
            f"{hit:.0f} (max {most})" if most else f"{hit:.0f}",
        ])  # fmt: skip
    return out


#: The layouts the README's table shows, of those ``bench_layouts`` builds.
LAYOUTS = (("clements", "8"), ("clements", "16"), ("clements", "32"), ("reck", "32"),
           ("hexagonal", "6x6"), ("hexagonal", "9x9"))  # fmt: skip


def layouts_rows() -> list[list[object]]:
    """The layouts table: a row per layout of :data:`LAYOUTS`, its bare and wired builds."""
    rows = benchmark("layouts")["rows"]
    out: list[list[object]] = []
    for mesh, size in LAYOUTS:
        mine = [r for r in rows if r["mesh"] == mesh and r["size"] == size]
        bare, wired = mine[0], mine[-1]  # a feed-forward mesh is built without pads, then with
        pads = wired is not bare
        out.append([
            f"{mesh.capitalize() if mesh != 'hexagonal' else mesh} {size}", wired["elements"],
            wired["pads"] if pads else "", wired["die_mm"], t(bare["build_s"], 2),
            t(wired["build_s"], 2) if pads else "", t(wired["graph_s"], 2),
            t(wired["metal_s"], 2),
        ])  # fmt: skip
    return out


def programming_rows() -> list[list[object]]:
    """The programming table: infidelities and time, without loss and at 0.5 dB per MZI."""
    run = benchmark("programming")
    return [
        [f"{loss:g} dB", *(exp(r[f"infidelity_{k}"]) for k in ("naive", "local", "refined")),
         t(r["program_s"], 2)]
        for loss in (0.0, 0.5) for r in [run[f"loss_{loss}_db"]]
    ]  # fmt: skip


def hil() -> dict:
    """The instrument benchmark's figures (``benchmarks/bench_hil.py``)."""
    return benchmark("hil")


def peer_rows() -> list[list[object]]:
    """The summary table: each benchmark's headline against its peer."""
    m32, fail, h = router()["matching_32"], benchmark("failover"), hil()
    splice = fail["failover_compute_s"] + fail["failover_modeled_s"]
    nagle, session = h["write_then_query_nagle_s"], h["write_then_query_s"]
    return [
        peer_row("decompose a Haar-random 128x128 unitary (Clements)", "decompose"),
        peer_row("route a 128-port permutation (bar/cross settings)", "route",
                 " decomposing the permutation matrix"),
        peer_row("transfer matrix of a 128-port mesh", "transfer"),
        [f"route a 32-endpoint matching on a 278-cell hexagonal mesh (median of {m32['n']})",
         f"{t(m32['ours_median_s'])}, {m32['ours_routed']} of {m32['n']} routed",
         f"networkx shortest paths with conflict retry, {t(m32['baseline_median_s'])}, "
         f"{m32['baseline_routed']} of {m32['n']}", x(router()["speedup_matching_32"])],
        ["splice a spare in for a failed accelerator (compute + modeled heaters)", t(splice),
         "published prototypes, about 1 s", x(fail["speedup_vs_published"])],
        ["a SCPI write then a query over loopback TCP", f"{t(session)} (`hil.visa.Session`)",
         f"plain pyvisa-py resource, {t(nagle)} (Nagle's delayed ACK)", x(nagle / session)],
        ["calibrate an 8-port chip on the emulated bench over VISA",
         t(h["bench_calibration_s_8"]),
         f"the same chip in process, {t(h['in_process_calibration_s_8'])} (the instruments' "
         "round trips and modeled heater writes)", "-"],
    ]  # fmt: skip


def hil_text(template: str) -> Callable[[], str]:
    """A value of the instrument benchmark: ``template`` formatted with its figures, the times
    (``..._s``, ``..._s_8``) as :func:`t` writes them, ``ratio`` the query's over a raw one."""

    def make() -> str:
        h = hil()
        times = {k: t(v) for k, v in h.items() if re.search(r"_s(_\d+)?$", k)}
        return template.format(**h | times, ratio=x(h["query_latency_ratio"]))

    return make
