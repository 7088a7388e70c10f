import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import unitary_group

from photonics import (
    ClementsMesh,
    Matching,
    MeshSettings,
    MZIImperfections,
    NotUnitaryError,
    Permutation,
    ReckMesh,
    SettingsError,
    ShapeError,
)
from photonics.feedforward.meshes import fidelity
from tests.strategies import haar_unitaries, permutations, seeds

MESHES = [ClementsMesh, ReckMesh]
mesh_types = st.sampled_from(MESHES)
sizes = st.sampled_from([2, 3, 4, 5, 8, 13, 16, 31, 64])


@pytest.mark.parametrize("cls", MESHES)
@pytest.mark.parametrize("n", [2, 3, 4, 7, 16, 33])
def test_geometry_is_a_valid_column_layout(cls, n: int) -> None:
    mesh = cls(n)
    assert mesh.n_mzis == len(mesh.columns) == len(mesh.modes) == n * (n - 1) // 2
    # a 2-mode Clements mesh has a single MZI, so its second column is empty
    assert mesh.n_columns == ((1 if n == 2 else n) if cls is ClementsMesh else 2 * n - 3)
    assert np.all(np.diff(mesh.columns) >= 0)
    assert np.all((mesh.modes >= 0) & (mesh.modes <= n - 2))
    for c in range(mesh.n_columns):
        used = np.concatenate([mesh.modes[mesh.columns == c], mesh.modes[mesh.columns == c] + 1])
        assert len(set(used)) == len(used), f"column {c} uses a mode twice"
    assert len(set(zip(mesh.columns, mesh.modes, strict=True))) == mesh.n_mzis


def test_known_geometry_of_four_modes() -> None:
    clements = ClementsMesh(4)
    assert list(zip(clements.columns, clements.modes, strict=True)) == [
        (0, 0), (0, 2), (1, 1), (2, 0), (2, 2), (3, 1)
    ]  # fmt: skip
    reck = ReckMesh(4)
    assert list(zip(reck.columns, reck.modes, strict=True)) == [
        (0, 0), (1, 1), (2, 0), (2, 2), (3, 1), (4, 0)
    ]  # fmt: skip


@given(mesh_types, sizes, seeds)
def test_ideal_transfer_is_unitary(cls, n: int, seed: int) -> None:
    mesh = cls(n)
    M = mesh.transfer(mesh.random_settings(np.random.default_rng(seed)))
    assert np.abs(M @ M.conj().T - np.eye(n)).max() < 1e-12


@given(mesh_types, sizes, seeds, st.floats(0, 0.3), st.floats(0, 2))
def test_lossy_transfer_is_passive(cls, n, seed, sigma, loss_db) -> None:
    mesh = cls(n)
    rng = np.random.default_rng(seed)
    imp = MZIImperfections.sample(mesh.n_mzis, rng, sigma, loss_db, loss_cross_db=loss_db / 2)
    M = mesh.transfer(mesh.random_settings(rng), imp)
    assert np.linalg.svd(M, compute_uv=False).max() <= 1 + 1e-12


@given(mesh_types, st.sampled_from([2, 5, 12]), seeds)
def test_batched_transfer_equals_one_by_one(cls, n: int, seed: int) -> None:
    mesh = cls(n)
    rng = np.random.default_rng(seed)
    batch = mesh.random_settings(rng, (3, 2))
    imp = MZIImperfections.sample(mesh.n_mzis, rng, 0.05, 0.5)
    for model in (None, imp):
        M = mesh.transfer(batch, model)
        assert M.shape == (3, 2, n, n)
        for i, j in np.ndindex(3, 2):
            one = MeshSettings(batch.theta[i, j], batch.phi[i, j], batch.output_phase[i, j])
            assert np.allclose(M[i, j], mesh.transfer(one, model), atol=1e-14)


@given(mesh_types, sizes.flatmap(lambda n: st.tuples(st.just(n), haar_unitaries(n))))
def test_decompose_round_trip(cls, n_and_u) -> None:
    n, U = n_and_u
    mesh = cls(n)
    s = mesh.decompose(U)
    assert np.all((s.theta >= 0) & (s.theta <= np.pi / 2))
    assert np.abs(mesh.transfer(s) - U).max() <= 1e-12


@pytest.mark.parametrize("cls", MESHES)
def test_decompose_512_ports_to_1e_12(cls) -> None:
    U = unitary_group.rvs(512, random_state=512)
    mesh = cls(512)
    assert np.abs(mesh.transfer(mesh.decompose(U)) - U).max() <= 1e-12


@pytest.mark.parametrize("cls", MESHES)
def test_decompose_known_matrices(cls) -> None:
    mesh = cls(4)
    s = mesh.decompose(np.eye(4))
    assert np.allclose(s.theta, 0)
    assert np.allclose(mesh.transfer(s), np.eye(4), atol=1e-15)
    swap = Permutation([1, 0, 3, 2]).to_matrix()
    assert np.allclose(mesh.transfer(mesh.decompose(swap)), swap, atol=1e-15)


@given(mesh_types, st.integers(1, 64).flatmap(permutations))
def test_route_realises_the_permutation_with_bar_and_cross_only(cls, perm) -> None:
    if perm.n_ports < 2:
        return
    mesh = cls(perm.n_ports)
    s = mesh.route(perm)
    assert set(np.unique(s.theta)) <= {0.0, np.pi / 2}
    assert np.all(s.phi == 0)
    M = mesh.transfer(s)
    full = perm.completed().to_matrix()
    assert np.abs(M - full).max() < 1e-12  # exactly, output phases included
    for i, j in perm.pairs():
        assert abs(M[j, i]) ** 2 > 1 - 1e-12


@given(mesh_types, st.sampled_from([2, 4, 6, 16, 32]).flatmap(lambda n: st.just(n)), seeds)
def test_route_a_matching_connects_both_ways(cls, n, seed) -> None:
    m = Matching.random(n, np.random.default_rng(seed))
    M = cls(n).transfer(cls(n).route(m))
    for a, b in m.pairs:
        assert np.isclose(abs(M[b, a]), 1) and np.isclose(abs(M[a, b]), 1)


def test_route_identity_is_all_bar() -> None:
    mesh = ClementsMesh(8)
    s = mesh.route(Permutation(list(range(8))))
    assert np.all(s.theta == 0) and np.all(s.output_phase == 0)
    reverse = mesh.route(Permutation(list(range(7, -1, -1))))
    assert np.all(reverse.theta == np.pi / 2)  # reversal crosses at every comparator


@given(mesh_types, st.sampled_from([2, 3, 6, 10]), seeds, st.floats(0.0, 0.1))
def test_local_correction_is_exact_when_every_state_is_reachable(cls, n, seed, sigma) -> None:
    mesh = cls(n)
    rng = np.random.default_rng(seed)
    target = mesh.random_settings(rng)
    # keep every MZI away from bar and cross, which imperfect couplers cannot reach exactly
    target = MeshSettings(rng.uniform(0.5, 1.0, mesh.n_mzis), target.phi, target.output_phase)
    imp = MZIImperfections.sample(mesh.n_mzis, rng, sigma, loss_db=0.0)
    corrected = mesh.correct_locally(target, imp)
    assert np.abs(mesh.transfer(corrected, imp) - mesh.transfer(target)).max() < 1e-10


def test_program_beats_naive_settings_with_2_percent_splitter_error() -> None:
    mesh = ClementsMesh(16)
    rng = np.random.default_rng(1)
    U = unitary_group.rvs(16, random_state=3)
    imp = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma=0.02, loss_db=0.5)
    result = mesh.program(U, imp)
    assert np.isclose(result.naive_fidelity, fidelity(U, mesh.transfer(result.naive_settings, imp)))
    assert np.isclose(result.fidelity, fidelity(U, mesh.transfer(result.settings, imp)))
    assert result.naive_fidelity < 0.99
    # infidelity at least 3x smaller than the naive settings'
    assert 1 - result.fidelity < (1 - result.naive_fidelity) / 3
    local_only = mesh.program(U, imp, max_evaluations=0)
    assert local_only.fidelity <= result.fidelity + 1e-12


def test_fidelity_ignores_global_phase_and_uniform_loss() -> None:
    U = unitary_group.rvs(5, random_state=1)
    assert np.isclose(fidelity(U, 0.3 * np.exp(1j) * U), 1)
    assert fidelity(U, unitary_group.rvs(5, random_state=2)) < 0.9


@given(st.integers(2, 40), seeds, st.floats(1e-3, 10))
def test_fidelity_stays_in_0_1_even_for_a_perfect_match(n, seed, scale) -> None:
    # 1 - F of a mesh programmed exactly was -4.4e-16: rounding above the bound
    rng = np.random.default_rng(seed)
    U = unitary_group.rvs(n, random_state=rng) if n > 1 else np.eye(1)
    phase = np.exp(1j * rng.uniform(0, 2 * np.pi))
    assert fidelity(U, scale * phase * U) == 1.0 or 0 <= 1 - fidelity(U, scale * phase * U) < 1e-14
    assert 0 <= fidelity(U, rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))) <= 1


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: ClementsMesh(1), ShapeError, "n >= 2 modes, got n=1"),
        (lambda: ReckMesh("4"), ShapeError, "got n='4'"),
        (lambda: ClementsMesh(3).decompose(np.eye(4)), ShapeError, "expected a 3x3 matrix"),
        (lambda: ClementsMesh(2).decompose([[1, 1], [0, 1]]), NotUnitaryError, "atol=1e-10"),
        (lambda: ClementsMesh(2).decompose([[np.nan, 0], [0, 1]]), NotUnitaryError, "non-finite"),
        (lambda: ClementsMesh(3).route(Permutation([0, 1])), ShapeError, "2 ports, the mesh has 3"),
        (lambda: ClementsMesh(3).route([0, 1, 2]), SettingsError, "Permutation or Matching"),
        (
            lambda: ClementsMesh(3).transfer(MeshSettings([0.0], [0.0], [0.0, 0.0, 0.0])),
            ShapeError,
            "needs 3 MZI phases",
        ),
        (lambda: MeshSettings([0.0], [0.0, 1.0], [0.0]), ShapeError, "differ in shape"),
        (
            lambda: ClementsMesh(2).program(np.eye(2), MZIImperfections(), max_evaluations=-1),
            SettingsError,
            "max_evaluations must be >= 0, got -1",
        ),
        (lambda: MeshSettings([np.inf], [0.0], [0.0]), SettingsError, "theta must be a finite"),
        (
            lambda: ClementsMesh(3).transfer(
                ClementsMesh(3).decompose(np.eye(3)), MZIImperfections(np.zeros(5))
            ),
            ShapeError,
            r"splitter_error_in has shape \(5,\); expected a scalar or \(3,\)",
        ),
    ],
)
def test_invalid_input_is_refused_with_a_named_error(call, error, words) -> None:
    with pytest.raises(error, match=words):
        call()


def test_tolerance_is_adjustable() -> None:
    almost = np.eye(3) * (1 + 1e-6)
    with pytest.raises(NotUnitaryError, match="2e-06 exceeds"):
        ClementsMesh(3).decompose(almost)
    s = ClementsMesh(3).decompose(almost, atol=1e-5)
    assert np.allclose(ClementsMesh(3).transfer(s), np.eye(3), atol=1e-5)


def test_program_undoes_splitter_error_almost_completely_on_a_lossless_mesh() -> None:
    mesh = ClementsMesh(16)
    rng = np.random.default_rng(100)
    U = unitary_group.rvs(16, random_state=rng)
    imp = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma=0.02, loss_db=0.0)
    result = mesh.program(U, imp)
    assert 1 - result.naive_fidelity > 5e-3
    assert 1 - result.fidelity < 1e-5
