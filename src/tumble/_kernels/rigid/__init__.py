"""Rigid-body kernels: the integrators' steps and flows, and the loops that run them.

The carried state of every method is ``(q, L_b)``: the body-to-world unit quaternion and the
body-frame angular momentum; ``omega = R J L_b`` is derived. Inverse moments ``J`` may be
zero (an axis held by a constraint): ``I`` is then the pseudo-inverse and every step starts
by clearing the momentum on such axes (:func:`~tumble._kernels.rigid.common.constrain`).

Modules, one concern each (numba caches per source file):

* :mod:`~tumble._kernels.rigid.common`: tuple arithmetic, ``J_L``, ``J'``, a record;
* :mod:`~tumble._kernels.rigid.steps`: the steps that hold the torque over the step;
* :mod:`~tumble._kernels.rigid.flows`: the torque-free flows of the symmetric methods;
* :mod:`~tumble._kernels.rigid.rk4`: classical Runge-Kutta 4;
* :mod:`~tumble._kernels.rigid.engine_steps`: the public engines' updates, from the pieces in
  :mod:`~tumble._kernels.rigid.engine_parts`;
* :mod:`~tumble._kernels.rigid.table`: the kernel table each of those registers in, and the
  :class:`~tumble._kernels.rigid.table.Tag` that makes a method a compile-time value;
* :mod:`~tumble._kernels.rigid.compose`: one step of a method (``step_of``): where the
  torque enters, Strang kicks and compositions;
* :mod:`~tumble._kernels.rigid.loops`: the loops over bodies and steps, compiled per method.

Importing this package registers every kernel; ``tumble.rigid`` imports it on its first
``step`` or ``simulate``.
"""

from tumble._kernels.rigid import engine_steps, flows, rk4, steps  # noqa: F401  (they register kernels)
