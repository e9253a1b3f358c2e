"""Trees of dynamic transforms: propagation, local/global conversions, forces, impulses.

A :class:`Hierarchy` holds, for every node, its **local** dynamic transform: the
child-to-parent transform ``A1 = (T1, R1, S1)`` and the rates ``v1, a1, omega1, alpha1``,
all in the parent's coordinates (see :mod:`tumble.transform` for the frames and for how
scale enters). A node added with ``parent=None`` hangs from the world, the inertial root
frame, so its local and global dynamics coincide. A node's **global** dynamic is the
composition ``A_root * ... * A_parent * A_node`` of the dynamic transforms on its path
(velocities in world coordinates, angular quantities in the world basis).

Nodes are stored as structure-of-arrays (``(capacity, n)`` translations, ``(capacity, n,
n)`` rotations and skew matrices...), so :meth:`Hierarchy.globals` composes the whole tree
level by level in compiled kernels, and :meth:`Hierarchy.step` advances every node at once.
Node ids are integers issued in order and never reused; removed nodes read as NaN in
:meth:`Hierarchy.globals`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._kernels import transform as _k
from tumble._linalg import antisymmetric_part, axial_vector, cross_matrix
from tumble._validate import (
    as_choice,
    as_float_array,
    as_float_dtype,
    as_int,
    as_scalar,
    check_finite_result,
    check_rotation_matrix,
    check_skew,
)
from tumble.kinematics import magnus
from tumble.rotation import rotvec_to_matrix
from tumble.transform import DynamicTransform, Transform, skew2

__all__ = ["Hierarchy", "HierarchyGlobals", "LocalAcceleration"]

_FIELDS = ("_T", "_R", "_S", "_v", "_a", "_w", "_al", "_parent", "_alive")


@dataclass(frozen=True)
class LocalAcceleration:
    """A node's acceleration relative to its parent under a world-frame force.

    Every field has shape (n,) and is in the **parent's** coordinates (the frame of the
    node's local translation ``T1``). With the parent's global dynamic ``A2`` and tildes
    for "expressed in the parent basis" (``F~ = J2^-1 F``, ``a2~ = J2^-1 a2``,
    ``omega2~ = J2^-1 omega2 J2 = R2^T omega2 R2``, ``alpha2~ = R2^T alpha2 R2``):

    ``total = applied + linear + euler + centrifugal + coriolis`` with

    * ``applied = F~ / m``
    * ``linear = -a2~`` (the parent's own acceleration)
    * ``euler = -alpha2~ T1``
    * ``centrifugal = -omega2~^2 T1``
    * ``coriolis = -2 omega2~ v1``

    In 3-D with the vectors ``w = unskew(omega2~)``, ``al = unskew(alpha2~)``:
    centrifugal ``-w x (w x T1)``, Coriolis ``-2 w x v1``, Euler ``-al x T1``.
    In 2-D with scalars ``w``, ``al`` and ``(x, y)_perp = (-y, x)``: centrifugal
    ``w^2 T1``, Coriolis ``-2 w v1_perp``, Euler ``-al T1_perp``.
    """

    total: np.ndarray
    applied: np.ndarray
    linear: np.ndarray
    euler: np.ndarray
    centrifugal: np.ndarray
    coriolis: np.ndarray


@dataclass(frozen=True)
class HierarchyGlobals:
    """Every node's global dynamic at once, indexed by node id (world frame).

    Arrays have ``N`` rows, one per node id ever issued; rows of removed nodes are NaN and
    ``alive`` is False there. ``hierarchy_globals[node]`` gives one node's
    :class:`~tumble.transform.DynamicTransform`.
    """

    translation: np.ndarray  #: (N, n)
    rotation: np.ndarray  #: (N, n, n)
    scale: np.ndarray  #: (N,)
    velocity: np.ndarray  #: (N, n)
    acceleration: np.ndarray  #: (N, n)
    angular_velocity: np.ndarray  #: (N, n, n), skew
    angular_acceleration: np.ndarray  #: (N, n, n), skew
    alive: np.ndarray  #: (N,), bool

    def __len__(self) -> int:
        return int(self.alive.shape[0])

    def __getitem__(self, node: Any) -> DynamicTransform:
        i = as_int(node, "node", minimum=0)
        if i >= len(self) or not self.alive[i]:
            raise InputError(f"node: expected a live node id below {len(self)}, got {i}")
        A = Transform._make(self.translation[i], self.rotation[i], float(self.scale[i]))
        return DynamicTransform._make(
            A,
            self.velocity[i],
            self.acceleration[i],
            self.angular_velocity[i],
            self.angular_acceleration[i],
        )


class Hierarchy:
    """A tree of nodes, each holding its local :class:`~tumble.transform.DynamicTransform`.

    Parameters
    ----------
    n : int
        Dimension of the space (1 or more).
    dtype : float32 or float64, optional
        Storage and compute dtype (default float64); input is cast to it.

    Notes
    -----
    Costs: :meth:`add`, :meth:`local`, :meth:`set_local` are O(1); :meth:`global_`,
    :meth:`set_global`, :meth:`local_acceleration` are O(depth) NumPy calls;
    :meth:`globals` and :meth:`step` are O(N) compiled (plus a once-per-change O(N)
    rebuild of the breadth order after :meth:`add`, :meth:`remove`, :meth:`reparent`).
    """

    def __init__(self, n: int, dtype: DTypeLike = np.float64) -> None:
        self._n = as_int(n, "n", minimum=1)
        self._dtype = as_float_dtype(dtype)
        self._count = 0
        self._cap = 0
        n = self._n
        self._T = np.empty((0, n), self._dtype)
        self._R = np.empty((0, n, n), self._dtype)
        self._S = np.empty(0, self._dtype)
        self._v = np.empty((0, n), self._dtype)
        self._a = np.empty((0, n), self._dtype)
        self._w = np.empty((0, n, n), self._dtype)
        self._al = np.empty((0, n, n), self._dtype)
        self._parent = np.empty(0, np.int64)
        self._alive = np.empty(0, np.bool_)
        self._n_alive = 0
        self._topology: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._children_index: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ structure

    @property
    def n(self) -> int:
        """Dimension of the space."""
        return self._n

    @property
    def dtype(self) -> np.dtype:
        """Storage dtype."""
        return self._dtype

    def __len__(self) -> int:
        """Number of live nodes."""
        return self._n_alive

    def __contains__(self, node: object) -> bool:
        return (
            isinstance(node, int | np.integer)
            and not isinstance(node, bool)
            and 0 <= int(node) < self._count
            and bool(self._alive[int(node)])
        )

    def nodes(self) -> np.ndarray:
        """Ids of the live nodes, ascending."""
        return np.flatnonzero(self._alive[: self._count])

    def _node(self, node: Any, name: str = "node") -> int:
        i = as_int(node, name)
        if not 0 <= i < self._count or not self._alive[i]:
            raise InputError(
                f"{name}: expected a node of this hierarchy, got {i} (unknown or removed)"
            )
        return i

    def parent(self, node: Any) -> int | None:
        """The parent's id, or None for a node hanging from the world."""
        p = int(self._parent[self._node(node)])
        return None if p < 0 else p

    def children(self, node: Any) -> np.ndarray:
        """Ids of the node's immediate children, ascending."""
        i = self._node(node)
        start, kids = self._children()
        return kids[start[i] : start[i + 1]].copy()

    def _children(self) -> tuple[np.ndarray, np.ndarray]:
        if self._children_index is None:
            N = self._count
            ids = np.flatnonzero(self._alive[:N] & (self._parent[:N] >= 0))
            by_parent = ids[np.argsort(self._parent[ids], kind="stable")]
            start = np.searchsorted(self._parent[by_parent], np.arange(N + 1))
            self._children_index = (start, by_parent)
        return self._children_index

    def _subtree(self, i: int) -> np.ndarray:
        start, kids = self._children()
        found = [np.array([i])]
        frontier = found[0]
        while frontier.size:
            frontier = np.concatenate([kids[start[j] : start[j + 1]] for j in frontier])
            found.append(frontier)
        return np.concatenate(found)

    def _levels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._topology is None:
            N = self._count
            self._topology = _k.tree_levels(self._parent[:N], self._alive[:N])
        return self._topology

    def _changed_structure(self) -> None:
        self._topology = None
        self._children_index = None

    def _reserve(self, extra: int) -> None:
        need = self._count + extra
        if need <= self._cap:
            return
        cap = max(need, 2 * self._cap, 16)
        for name in _FIELDS:
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), old.dtype)
            new[: self._count] = old[: self._count]
            setattr(self, name, new)
        self._cap = cap

    def _as_local(self, local: Any, name: str) -> DynamicTransform:
        if isinstance(local, Transform):
            local = DynamicTransform(local)
        if not isinstance(local, DynamicTransform):
            raise InputError(
                f"{name}: expected a DynamicTransform or Transform, got {type(local).__name__}"
            )
        if local.n != self._n:
            raise InputError(f"{name}: expected a {self._n}-D transform, got a {local.n}-D one")
        return local

    def _check_storable(self, d: DynamicTransform, name: str) -> None:
        """``InputError`` naming ``name`` if ``d`` overflows the hierarchy's dtype."""
        A = d.transform
        parts = (A.translation, A.scale, d.velocity, d.acceleration, d.angular_velocity)
        with np.errstate(all="ignore"):
            cast = [np.asarray(x).astype(self._dtype) for x in (*parts, d.angular_acceleration)]
        check_finite_result(name, f"a local dynamic in {self._dtype}", *cast)

    def _global_local(self, p: int, g: DynamicTransform, name: str) -> DynamicTransform:
        """The local dynamic under node ``p`` that has the global dynamic ``g``."""
        try:
            return self.global_(p).to_local(g)
        except InputError:
            raise InputError(
                f"{name}: too large or too small, the local dynamic under node {p} "
                "overflows the float range"
            ) from None

    def _store(self, i: int, d: DynamicTransform) -> None:
        A = d.transform
        self._T[i] = A.translation
        self._R[i] = A.rotation
        self._S[i] = A.scale
        self._v[i] = d.velocity
        self._a[i] = d.acceleration
        self._w[i] = d.angular_velocity
        self._al[i] = d.angular_acceleration

    def add(self, local: Any, parent: Any = None) -> int:
        """Add a node with the given local dynamic under ``parent`` (None: the world).

        Parameters
        ----------
        local : DynamicTransform or Transform
            The node relative to its parent (a Transform means zero velocities).
        parent : int or None
            A live node id.

        Returns
        -------
        int
            The new node's id.
        """
        local = self._as_local(local, "local")
        p = -1 if parent is None else self._node(parent, "parent")
        self._check_storable(local, "local")
        self._reserve(1)
        i = self._count
        self._store(i, local)
        self._parent[i] = p
        self._alive[i] = True
        self._count += 1
        self._n_alive += 1
        self._changed_structure()
        return i

    def add_many(
        self,
        parent: ArrayLike,
        translation: ArrayLike,
        rotation: ArrayLike,
        scale: ArrayLike = 1.0,
        velocity: ArrayLike | None = None,
        acceleration: ArrayLike | None = None,
        angular_velocity: ArrayLike | None = None,
        angular_acceleration: ArrayLike | None = None,
    ) -> np.ndarray:
        """Add ``m`` nodes at once from arrays (the bulk form of :meth:`add`).

        Parameters
        ----------
        parent : array_like of int, shape (m,)
            Parent of each new node: -1 for the world, a live node id, or the id of a new
            node earlier in this batch (new ids are ``len_ids + j`` in order, where
            ``len_ids`` is the number of ids issued before the call).
        translation : array_like, shape (m, n)
        rotation : array_like, shape (m, n, n)
            Each checked as in :class:`~tumble.transform.Transform`.
        scale : array_like, shape (m,) or scalar
        velocity, acceleration : array_like, shape (m, n), optional
        angular_velocity, angular_acceleration : array_like, shape (m, n, n), optional
            Skew matrices; ``(m,)`` scalars in 2-D and ``(m, 3)`` vectors in 3-D also work.

        Returns
        -------
        ndarray of int64, shape (m,)
            The new ids.
        """
        n, first = self._n, self._count
        try:
            par = np.asarray(parent)
        except ValueError:  # ragged
            raise InputError(f"parent: expected a 1-D integer array, got {parent!r:.80}") from None
        if par.shape == (0,):
            par = par.astype(np.int64)  # an empty list arrives as float64
        if par.ndim != 1 or par.dtype.kind not in "iu":
            raise InputError(
                f"parent: expected a 1-D integer array, got {par.dtype} of shape {par.shape}"
            )
        m = par.shape[0]
        par = par.astype(np.int64)
        own = first + np.arange(m)
        ok = (par >= -1) & (par < own)
        old = (par >= 0) & (par < first)
        ok[old] &= self._alive[par[old]]
        if not np.all(ok):
            j = int(np.flatnonzero(~ok)[0])
            raise InputError(
                f"parent: entry {j} is {int(par[j])}, expected -1, a live node "
                f"or a new node earlier in the batch (ids {first}..{first + m - 1})"
            )
        T = _batch(translation, "translation", (m, n), self._dtype)
        R = _batch(rotation, "rotation", (m, n, n), self._dtype)
        check_rotation_matrix(R, "rotation")
        S = (
            np.broadcast_to(as_float_array(scale, "scale"), (m,))
            if np.ndim(scale) == 0
            else _batch(scale, "scale", (m,), self._dtype)
        )
        if np.any(S <= 0):
            raise InputError(f"scale: expected positive values, got min {float(np.min(S))}")
        v = _batch(velocity, "velocity", (m, n), self._dtype)
        a = _batch(acceleration, "acceleration", (m, n), self._dtype)
        w = _skew_batch(angular_velocity, "angular_velocity", m, n, self._dtype)
        al = _skew_batch(angular_acceleration, "angular_acceleration", m, n, self._dtype)
        self._reserve(m)
        sl = slice(first, first + m)
        self._T[sl], self._R[sl], self._S[sl] = T, R, S
        self._v[sl], self._a[sl], self._w[sl], self._al[sl] = v, a, w, al
        self._parent[sl] = par
        self._alive[sl] = True
        self._count += m
        self._n_alive += m
        self._changed_structure()
        return own

    def remove(self, node: Any) -> np.ndarray:
        """Remove a node and its whole subtree; return the removed ids (node first).

        To keep the children, :meth:`reparent` them first.
        """
        gone = self._subtree(self._node(node))
        self._alive[gone] = False
        self._n_alive -= gone.size
        self._changed_structure()
        return gone

    def reparent(self, node: Any, parent: Any) -> None:
        """Move a node (with its subtree) under ``parent`` (None: the world).

        The node's local dynamic is recomputed so that its global dynamic, and hence the
        global dynamic of every node below it, is unchanged (to round-off).
        """
        i = self._node(node)
        p = -1 if parent is None else self._node(parent, "parent")
        j = p
        while j >= 0:
            if j == i:
                raise InputError(
                    f"parent: node {p} lies in the subtree of node {i}; "
                    "reparenting there would make a cycle"
                )
            j = int(self._parent[j])
        g = self.global_(i)
        # p is outside i's subtree, so its global dynamic does not depend on the move.
        local = g if p < 0 else self._global_local(p, g, "parent")
        self._check_storable(local, "parent")
        self._parent[i] = p
        self._changed_structure()
        self._store(i, local)

    # ------------------------------------------------------------------ local / global

    def local(self, node: Any) -> DynamicTransform:
        """The node's dynamic relative to its parent (parent coordinates)."""
        i = self._node(node)
        A = Transform._make(self._T[i].copy(), self._R[i].copy(), float(self._S[i]))
        return DynamicTransform._make(
            A, self._v[i].copy(), self._a[i].copy(), self._w[i].copy(), self._al[i].copy()
        )

    def set_local(self, node: Any, local: Any) -> None:
        """Replace the node's local dynamic (a Transform means zero velocities)."""
        i = self._node(node)
        local = self._as_local(local, "local")
        self._check_storable(local, "local")
        self._store(i, local)

    def _parent_global(self, i: int) -> DynamicTransform:
        p = int(self._parent[i])
        return DynamicTransform.identity(self._n, self._dtype) if p < 0 else self.global_(p)

    def global_(self, node: Any) -> DynamicTransform:
        """The node's dynamic relative to the world: the composition along its path.

        O(depth) NumPy compositions; use :meth:`globals` for many nodes.
        """
        i = self._node(node)
        path = [i]
        while self._parent[path[-1]] >= 0:
            path.append(int(self._parent[path[-1]]))
        g = self.local(path.pop())
        try:
            while path:
                g = g * self.local(path.pop())
        except InputError:
            raise InputError(
                f"node: too large or too small, the global dynamic of node {i} overflows the "
                "float range (the composition along its path)"
            ) from None
        return g

    def set_global(self, node: Any, dynamic_transform: Any) -> None:
        """Set the node's local dynamic so that its global dynamic is the given one.

        Uses the global-to-local conversion :meth:`DynamicTransform.to_local` with the
        parent's current global dynamic. Descendants keep their local dynamics (so they
        follow the node).
        """
        i = self._node(node)
        g = self._as_local(dynamic_transform, "dynamic_transform")
        p = int(self._parent[i])
        local = g if p < 0 else self._global_local(p, g, "dynamic_transform")
        self._check_storable(local, "dynamic_transform")
        self._store(i, local)

    # ------------------------------------------------------------------ forces, impulses

    def local_acceleration(self, node: Any, force: ArrayLike, mass: Any) -> LocalAcceleration:
        """The node's acceleration relative to its parent when ``force`` acts on it.

        Parameters
        ----------
        node : int
        force : array_like, shape (n,)
            The total applied force, world coordinates.
        mass : float
            ``m > 0``.

        Returns
        -------
        LocalAcceleration
            ``a1 = F~/m - a2~ - alpha2~ T1 - omega2~^2 T1 - 2 omega2~ v1`` and its terms,
            in the parent's coordinates, using the node's current local ``T1``, ``v1`` and
            the parent's global dynamic. Equal to the ``acceleration`` of
            ``parent_global.to_local(g)`` where ``g`` is the node's global dynamic with its
            acceleration replaced by ``F / m`` (Newton in the inertial world frame). The
            result is not stored: pass it to :meth:`set_local` if wanted.
        """
        i = self._node(node)
        F = as_float_array(force, "force", (self._n,))
        if F.ndim != 1:
            raise InputError(f"force: expected shape ({self._n},), got shape {F.shape}")
        m = as_scalar(mass, "mass", positive=True)
        G = self._parent_global(i)
        Jinv = G.transform.inverse().linear
        R2 = G.transform.rotation
        w_t = R2.T @ G.angular_velocity @ R2
        al_t = R2.T @ G.angular_acceleration @ R2
        T1, v1 = self._T[i], self._v[i]
        with np.errstate(all="ignore"):
            applied = (Jinv @ F.astype(self._dtype)) / self._dtype.type(m)
            linear = -(Jinv @ G.acceleration)
            euler = -(al_t @ T1)
            centrifugal = -(w_t @ (w_t @ T1))
            coriolis = -2 * (w_t @ v1)
            total = applied + linear + euler + centrifugal + coriolis
            terms = [
                x.astype(self._dtype)
                for x in (total, applied, linear, euler, centrifugal, coriolis)
            ]
        check_finite_result("force, mass", "the acceleration F / m", *terms)
        return LocalAcceleration(*terms)

    def apply_impulse(
        self, node: Any, impulse: ArrayLike, mass: Any, isolate_children: bool = False
    ) -> None:
        """Apply a linear impulse to a node, changing its local velocity and acceleration.

        The global velocity change is ``dv = impulse / m`` (world coordinates); the node's
        global acceleration is unchanged. Locally that is ``dv1 = J2^-1 dv`` and, because of
        the Coriolis term, ``da1 = -2 J2^-1 omega2 dv`` (parent ``A2``).

        Without ``isolate_children`` every descendant inherits ``dv``. With it (the car
        crash: loose objects inside keep moving when the car stops) each immediate child
        gets the opposite local change ``dv1 = -Jn^-1 dv``, ``da1 = 2 Jn^-1 omegan dv``
        (``An`` the node's global dynamic), so every descendant's global velocity and
        acceleration stay as they were.

        Parameters
        ----------
        node : int
        impulse : array_like, shape (n,)
            World coordinates.
        mass : float
            ``m > 0``.
        isolate_children : bool
        """
        i = self._node(node)
        p = as_float_array(impulse, "impulse", (self._n,))
        if p.ndim != 1:
            raise InputError(f"impulse: expected shape ({self._n},), got shape {p.shape}")
        m = as_scalar(mass, "mass", positive=True)
        if not isinstance(isolate_children, bool | np.bool_):
            raise InputError(f"isolate_children: expected a bool, got {isolate_children!r}")
        kids = self.children(i) if isolate_children else np.zeros(0, np.int64)
        # Every change is computed and checked before any is stored, so an overflow
        # leaves the hierarchy as it was.
        try:
            with np.errstate(all="ignore"):
                dv = p / m
                G = self._parent_global(i)
                zero = np.zeros(self._n)
                changes: list[tuple[Any, np.ndarray, np.ndarray]] = [
                    (i, G.delta_velocity_to_local(dv), G.delta_acceleration_to_local(dv, zero))
                ]
                if kids.size:
                    Gn = self.global_(i)
                    changes.append(
                        (
                            kids,
                            Gn.delta_velocity_to_local(-dv),
                            Gn.delta_acceleration_to_local(-dv, zero),
                        )
                    )
                new = [(j, self._v[j] + dv1, self._a[j] + da1) for j, dv1, da1 in changes]
                check_finite_result("impulse", "", dv, *(x for _, *x in new))
        except InputError:
            raise InputError(
                "impulse, mass: too large or too small, the velocity change impulse / mass "
                "overflows the float range"
            ) from None
        for j, v1, a1 in new:
            self._v[j], self._a[j] = v1, a1

    # ------------------------------------------------------------------ time

    def step(self, dt: ArrayLike, order: int = 2) -> None:
        """Advance every node's local dynamic by ``dt`` with constant accelerations.

        Translation (exact for constant ``a1``): ``T1 += v1 dt + a1 dt^2 / 2``,
        ``v1 += a1 dt``. Rotation: ``R1 <- exp(Omega) R1`` with ``Omega`` the Magnus
        expansion of ``omega1(t) = omega1 + alpha1 t`` (``dR1/dt = omega1 R1``, so
        ``omega1`` is in the parent's basis, exactly the frame that tumble's "world-frame"
        Magnus update expects), then ``omega1 += alpha1 dt``. ``order`` 1 keeps
        ``omega dt + alpha dt^2/2`` (local error O(dt^3)); 2 adds ``-(dt^3/12)[omega,
        alpha]`` (O(dt^5), global O(dt^4)); 4 adds every dt^5 term (O(dt^6)). In 3-D this is
        :func:`tumble.kinematics.magnus` with :func:`tumble.rotation.rotvec_to_matrix`; in
        2-D the commutators vanish and ``exp`` is a plane rotation; in n-D the same series
        with matrix commutators and ``scipy.linalg.expm`` of the skew increment. Scale is
        constant. Each node's local motion is advanced on its own, with its local
        accelerations held constant; global motion follows by composition. In 3-D a step
        that turns a node by pi or more warns (``tumble.kinematics.magnus``), where the
        series is no longer guaranteed to converge (2-D steps are exact at any size; in 4-D
        and up keep ``|omega| dt`` below pi yourself, nothing warns there).
        """
        h = as_scalar(dt, "dt")
        order = as_choice(as_int(order, "order"), "order", (1, 2, 4))
        N = self._count
        if N == 0:
            return
        # The new state is computed aside and checked before it replaces the old one, so a
        # step that overflows raises and leaves the hierarchy as it was.
        T, v = self._T[:N].copy(), self._v[:N].copy()
        a, w, al = self._a[:N], self._w[:N], self._al[:N]
        try:
            with np.errstate(all="ignore"):
                _k.translate_nodes(T, v, a, self._dtype.type(h))
                R = self._rotation_increment(w, al, h, order) @ self._R[:N]
                w1 = w + al * self._dtype.type(h)
                check_finite_result("dt", "", T, v, R, w1)
        except InputError:
            raise InputError(
                f"dt: too large, a step of {h:.3g} moves a node beyond the float range"
            ) from None
        self._T[:N], self._v[:N], self._R[:N], self._w[:N] = T, v, R, w1

    def _rotation_increment(
        self, w: np.ndarray, al: np.ndarray, h: float, order: int
    ) -> np.ndarray:
        n = self._n
        if n == 3:
            Omega = magnus(axial_vector(w), axial_vector(al), h, order=order)
            return np.asarray(rotvec_to_matrix(Omega), dtype=self._dtype)
        Om = np.empty_like(w)
        _k.magnus_skew(w, al, self._dtype.type(h), order, Om)
        if n == 1:
            return np.ones_like(Om)
        if n == 2:
            theta = Om[:, 1, 0]
            c, s = np.cos(theta), np.sin(theta)
            return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
        from scipy.linalg import expm

        return np.asarray(expm(Om), dtype=self._dtype)

    def globals(self, parallel: bool = False) -> HierarchyGlobals:
        """Every node's global dynamic, computed level by level in compiled kernels.

        Each level (all nodes at one depth) is composed from the previous one with the
        composition formulas of :meth:`DynamicTransform.__mul__`, one batched kernel call
        for the whole tree (O(N), about a microsecond per 3-D node or less).
        ``parallel=True`` splits each level over numba's threads; the threads meet at a
        barrier after every level, so it pays only for wide trees on idle cores (on a
        busy machine it can be slower than one thread, hence off by default).

        Returns
        -------
        HierarchyGlobals
            Arrays indexed by node id; removed nodes are NaN.
        """
        order, level_start, _ = self._levels()
        N, dt = self._count, self._dtype
        local = (self._T, self._R, self._S, self._v, self._a, self._w, self._al)
        out = [np.empty((N, *x.shape[1:]), dt) for x in local]
        if not isinstance(parallel, bool | np.bool_):
            raise InputError(f"parallel: expected a bool, got {parallel!r}")
        kernel = _k.globals_parallel if parallel else _k.globals_serial
        if N:
            kernel(order, level_start, self._parent[:N], *(x[:N] for x in local), *out)
        alive = self._alive[:N].copy()
        with np.errstate(invalid="ignore"):
            finite = np.logical_and.reduce(
                [np.isfinite(x).all(axis=tuple(range(1, x.ndim))) for x in out]
            )
        if not np.all(finite[alive]):
            raise InputError(
                f"node {int(np.flatnonzero(alive & ~finite)[0])}: too large or too small, its "
                "global dynamic overflows the float range (the composition along its path)"
            )
        if order.size < N:
            for x in out:
                x[~alive] = np.nan
        for x in (*out, alive):
            x.flags.writeable = False
        gT, gR, gS, gv, ga, gw, gal = out
        return HierarchyGlobals(gT, gR, gS, gv, ga, gw, gal, alive=alive)


def _batch(x: Any, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if x is None:
        return np.zeros(shape, dtype)
    arr = as_float_array(x, name, shape[1:])
    if arr.shape != shape:
        raise InputError(f"{name}: expected shape {shape}, got shape {arr.shape}")
    return arr.astype(dtype)


def _skew_batch(x: Any, name: str, m: int, n: int, dtype: np.dtype) -> np.ndarray:
    if x is None:
        return np.zeros((m, n, n), dtype)
    arr = as_float_array(x, name)
    if n == 2 and arr.shape == (m,):
        return skew2(arr).astype(dtype)
    if n == 3 and arr.shape == (m, 3):
        return cross_matrix(arr).astype(dtype)
    if arr.shape != (m, n, n):
        raise InputError(f"{name}: expected shape {(m, n, n)}, got shape {arr.shape}")
    check_skew(arr, name, "skew-symmetric matrices")
    return antisymmetric_part(arr).astype(dtype)
