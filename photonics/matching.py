"""Who talks to whom: directed permutations and undirected matchings of switch ports.

Ports are 0-based. Both maps may be partial: a port that is not mentioned is dark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from photonics.errors import MatchingError, PortError


def _check_size(n_ports: int) -> int:
    if isinstance(n_ports, bool) or not isinstance(n_ports, int | np.integer) or n_ports < 1:
        raise PortError(f"n_ports must be a positive integer, got {n_ports!r}")
    return int(n_ports)


def _check_port(port: object, n_ports: int, what: str) -> int:
    if isinstance(port, bool) or not isinstance(port, int | np.integer):
        raise PortError(f"{what} {port!r} is not an integer port index")
    if not 0 <= port < n_ports:
        raise PortError(f"{what} {port} is out of range: ports are 0..{n_ports - 1}")
    return int(port)


@dataclass(frozen=True)
class Permutation:
    """A directed, possibly partial, one-to-one map from input ports to output ports.

    ``targets[i]`` is the output port that input ``i`` is connected to, or ``None`` when input
    ``i`` is unused (dark).
    """

    targets: tuple[int | None, ...]

    def __init__(
        self, targets: Sequence[int | None] | Mapping[int, int], n_ports: int | None = None
    ) -> None:
        if isinstance(targets, Mapping):
            if n_ports is None:
                raise PortError("n_ports is required when a Permutation is given as a mapping")
            n = _check_size(n_ports)
            full: list[int | None] = [None] * n
            for i, j in targets.items():
                full[_check_port(i, n, "input")] = j
        else:
            full = list(targets)
            n = _check_size(len(full) if n_ports is None else n_ports)
            if len(full) != n:
                raise PortError(f"got {len(full)} targets for n_ports={n}")
        seen: dict[int, int] = {}
        for i, j in enumerate(full):
            if j is None:
                continue
            j = _check_port(j, n, f"target of input {i}")
            if j in seen:
                raise PortError(f"output {j} is used twice (by inputs {seen[j]} and {i})")
            seen[j] = i
            full[i] = j
        object.__setattr__(self, "targets", tuple(full))

    @property
    def n_ports(self) -> int:
        return len(self.targets)

    @property
    def is_complete(self) -> bool:
        """True when every input is connected."""
        return all(j is not None for j in self.targets)

    def pairs(self) -> list[tuple[int, int]]:
        """The connected (input, output) pairs in input order."""
        return [(i, j) for i, j in enumerate(self.targets) if j is not None]

    def completed(self) -> Permutation:
        """A complete permutation that agrees with this one on every connected input.

        Unused inputs are given the unused outputs in ascending order.
        """
        free = iter(sorted(set(range(self.n_ports)) - {j for _, j in self.pairs()}))
        return Permutation([next(free) if j is None else j for j in self.targets])

    def inverse(self) -> Permutation:
        inv: list[int | None] = [None] * self.n_ports
        for i, j in self.pairs():
            inv[j] = i
        return Permutation(inv)

    def is_involution(self) -> bool:
        """True when every connected input ``i -> j`` has ``j -> i`` too."""
        return all(self.targets[j] == i for i, j in self.pairs())

    def to_matrix(self) -> np.ndarray:
        """The ``n x n`` 0/1 matrix ``P`` with ``P[out, in] = 1`` (acts on column vectors)."""
        P = np.zeros((self.n_ports, self.n_ports))
        for i, j in self.pairs():
            P[j, i] = 1.0
        return P

    def to_matching(self) -> Matching:
        """The undirected matching of an involution without fixed points."""
        if not self.is_involution():
            bad = next((i, j) for i, j in self.pairs() if self.targets[j] != i)
            raise MatchingError(
                f"not an involution: {bad[0]} -> {bad[1]} but {bad[1]} -> {self.targets[bad[1]]}"
            )
        return Matching([(i, j) for i, j in self.pairs() if i <= j], self.n_ports)

    @classmethod
    def random(
        cls, n_ports: int, rng: np.random.Generator, n_connected: int | None = None
    ) -> Permutation:
        """A uniformly random permutation, with ``n_connected`` random inputs connected."""
        n = _check_size(n_ports)
        k = n if n_connected is None else int(n_connected)
        if not 0 <= k <= n:
            raise PortError(f"n_connected={n_connected} is out of range 0..{n}")
        targets: list[int | None] = [int(j) for j in rng.permutation(n)]
        for i in rng.choice(n, size=n - k, replace=False):
            targets[int(i)] = None
        return cls(targets)


@dataclass(frozen=True)
class Matching:
    """An undirected set of port pairs: ``(a, b)`` means ``a`` and ``b`` talk to each other.

    Pairs are stored normalised (``a < b``) and sorted. Ports in no pair are dark.
    """

    pairs: tuple[tuple[int, int], ...]
    n_ports: int

    def __init__(self, pairs: Iterable[tuple[int, int]], n_ports: int) -> None:
        n = _check_size(n_ports)
        used: dict[int, tuple[int, int]] = {}
        norm = []
        for pair in pairs:
            if len(pair) != 2:
                raise MatchingError(f"a pair has two ports, got {pair!r}")
            a = _check_port(pair[0], n, "port")
            b = _check_port(pair[1], n, "port")
            if a == b:
                raise MatchingError(f"port {a} is paired with itself")
            for p in (a, b):
                if p in used:
                    raise PortError(f"port {p} is in two pairs: {used[p]} and {(a, b)}")
                used[p] = (a, b)
            norm.append((min(a, b), max(a, b)))
        object.__setattr__(self, "pairs", tuple(sorted(norm)))
        object.__setattr__(self, "n_ports", n)

    @property
    def is_perfect(self) -> bool:
        """True when every port is in a pair."""
        return 2 * len(self.pairs) == self.n_ports

    def partner(self, port: int) -> int | None:
        """The port paired with ``port``, or ``None`` when it is dark."""
        _check_port(port, self.n_ports, "port")
        for a, b in self.pairs:
            if port in (a, b):
                return b if port == a else a
        return None

    def to_permutation(self) -> Permutation:
        """The involutive permutation ``a -> b, b -> a`` for every pair."""
        targets: list[int | None] = [None] * self.n_ports
        for a, b in self.pairs:
            targets[a], targets[b] = b, a
        return Permutation(targets)

    def to_matrix(self) -> np.ndarray:
        """The symmetric 0/1 permutation matrix of :meth:`to_permutation`."""
        return self.to_permutation().to_matrix()

    @classmethod
    def random(cls, n_ports: int, rng: np.random.Generator, n_pairs: int | None = None) -> Matching:
        """A uniformly random matching with ``n_pairs`` pairs (default: as many as fit)."""
        n = _check_size(n_ports)
        k = n // 2 if n_pairs is None else int(n_pairs)
        if not 0 <= k <= n // 2:
            raise MatchingError(f"n_pairs={n_pairs} is out of range 0..{n // 2}")
        order = rng.permutation(n)[: 2 * k]
        return cls([(int(order[2 * i]), int(order[2 * i + 1])) for i in range(k)], n)
