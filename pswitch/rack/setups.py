"""The published studies' stated setups, as data: racks, models and workloads, each number with
its source (``docs/rack.md`` has the full references). A number a paper leaves open is marked
*assumed* and swept by the studies.

Sources:

- [M] Morphlux, A. Vijaya Kumar et al., arXiv:2508.03674 (ASPLOS 2026): a 4 x 4 x 4 torus of
  64 accelerators, 4 a server; its prototype: 4 servers of one RTX 6000 Ada each, 2 optical
  ports of 10 Gb/s a server (split X and Y on the static torus), Llama-3.2-1B fine-tuned with
  2-GPU DDP at batch 8 (epoch 40.25 s against 23.37 s: 1.72x); swap and restart in 1.2 s.
- [L] LUMION, A. Vijaya Kumar et al., arXiv:2505.23105: a failed GPU swapped and the job
  restarted within about 1 s; nearly 2x fine-tuning throughput after the swap.
- [O] Opus, E. Ding et al., arXiv:2602.12521 (and arXiv:2507.08119): optical rails reconfigured
  per parallelism phase; Llama-3 8B on 16 GPUs, DP2 x PP2 x TP4 on 4 Perlmutter nodes of 4
  A100s; its repository's sweep of injected reconfiguration latencies.
- [S] StragglAR, A. Devraj et al., arXiv:2505.23523: 8 GPUs, alpha 3 us, 450 GiB/s, 1 GiB
  buffers in its analytical model; 22 % measured on an 8-GPU server.
- [D] data sheets: RTX 6000 Ada 182 TFLOPS dense BF16 tensor; A100 312 TFLOPS BF16 and NVLink 3
  300 GB/s each way; a Perlmutter GPU node's four 200 Gb/s Slingshot NICs, one a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from photonics.errors import SettingsError
from pswitch.rack.model import Rack


@dataclass(frozen=True)
class Model:
    """A model's training step on one accelerator: ``params`` parameters, ``tokens`` a step
    on each accelerator, gradients of ``grad_bytes`` a parameter, on an accelerator of
    ``peak_tflops`` at model FLOPs utilisation ``mfu`` (assumed; swept)."""

    name: str
    params: float
    tokens: float
    grad_bytes: float = 2.0
    peak_tflops: float = 182.0
    mfu: float = 0.3

    def __post_init__(self) -> None:
        if not 0 < self.mfu <= 1:
            raise SettingsError(f"mfu must be in (0, 1], got {self.mfu!r}")

    def compute_s(self, share: float = 1.0) -> float:
        """One step's computation on one accelerator holding ``share`` of the model, s:
        6 FLOPs a parameter and token (forward and backward) over the sustained rate."""
        return 6 * self.params * share * self.tokens / (self.peak_tflops * 1e12 * self.mfu)

    def gradient_bytes(self, share: float = 1.0) -> float:
        return self.params * share * self.grad_bytes


#: [M] Llama-3.2-1B, batch 8 over 2 GPUs at sequence length 512 (assumed: the group's DDP
#: script in the StragglAR repository uses 512), gradients all-reduced in BF16 (assumed), on
#: an RTX 6000 Ada [D].
LLAMA_1B = Model("Llama-3.2-1B", params=1.24e9, tokens=4 * 512)
#: [O] Llama-3 8B on an A100 [D], 8192 tokens a step a replica (assumed: torchtitan's
#: configuration), BF16 gradients.
LLAMA_8B = Model("Llama-3 8B", params=8.03e9, tokens=8192, peak_tflops=312.0)

#: [M] the prototype: 4 servers of one accelerator, 2 optical ports of 10 Gb/s each, on the
#: static torus one port a dimension (a 2 x 2 torus, 10 Gb/s a dimension).
PROTOTYPE = Rack(
    servers=4,
    per_server=1,
    ports=2,
    port_gbps=10.0,
    torus=(2, 2),
    torus_gbps=10.0,
    scale_up_gbps=20.0,
    scale_out_gbps=10.0,
    mesh="clements",
    driver="product",
)
#: [M] the simulated rack: 64 accelerators in a 4 x 4 x 4 torus, 4 a server, 6 links of one
#: unit (here 100 Gb/s, assumed: only ratios matter) an accelerator, one a direction.
TORUS_RACK = Rack(
    servers=16,
    per_server=4,
    ports=6,
    port_gbps=100.0,
    torus=(4, 4, 4),
    torus_gbps=100.0,
    scale_up_gbps=300.0,
    scale_out_gbps=100.0,
    mesh="clements",
    driver="parallel",
)
#: Half of [M]'s rack on the 32-endpoint hexagonal chip of [P] (E. Ding and R. Singh,
#: arXiv:2501.18136: 32 ports on a 9 x 9 mesh), the largest it joins: 8 servers of 4, a
#: 2 x 4 x 4 torus.
HEX_RACK = Rack(
    servers=8,
    per_server=4,
    ports=6,
    port_gbps=100.0,
    torus=(2, 4, 4),
    torus_gbps=100.0,
    scale_up_gbps=300.0,
    scale_out_gbps=100.0,
    mesh="switch32",
    driver="parallel",
)
#: [O] 4 Perlmutter nodes of 4 A100s: NVLink inside a node, one 200 Gb/s NIC a GPU onto the
#: rail (the optical rail: one OCS port a GPU at the NIC's rate).
PERLMUTTER = Rack(
    servers=4,
    per_server=4,
    ports=1,
    port_gbps=200.0,
    scale_up_gbps=2400.0,
    scale_out_gbps=200.0,
    mesh="clements",
    driver="parallel",
)
#: [O] the reconfiguration latencies its repository injects (s), and its run time over the
#: run without the controller at each (Llama-3 8B, with speculative provisioning).
OPUS_LATENCY_S = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0, 3.0)
OPUS_SLOWDOWN = (1.004, 1.019, 1.014, 1.043, 1.107, 1.234, 1.371, 1.486, 1.999, 2.597)
#: [S] the analytical model's link: alpha 3 us, 450 GiB/s; buffers of 1 GiB; 8 ranks.
STRAGGLAR_ALPHA_S = 3e-6
STRAGGLAR_GBPS = 450 * 2**30 * 8 / 1e9
STRAGGLAR_BYTES = 2.0**30

#: The published figures, by the key a study reproduces them under.
PUBLISHED = {
    "failover_throughput_ratio": 2.0,  # [L] "nearly 2x"
    "failover_swap_restart_s": 1.0,  # [L] "within ~1 second"; [M] 1.2 s
    "slicing_collective_speedup": 1.74,  # as the issue cites it; [M]'s abstract: "up to 66 %"
    "slicing_training_speedup": 1.72,  # [M] prototype, 40.25 s / 23.37 s
    "straggler_speedup_8": 1.22,  # [S] v1, measured
}
