"""tumble.trajectory.Trajectory.take: records and bodies by slice, int, index array, mask."""

from __future__ import annotations

import numpy as np
import pytest

from tumble import InputError, rigid

FIELDS = ("q", "omega", "L", "L_body", "energy")


def _batch(shape=(3,)) -> rigid.Trajectory:
    rng = np.random.default_rng(7)
    n = 5
    return rigid.Trajectory(
        t=np.arange(n, dtype=float),
        q=rng.normal(size=(n, *shape, 4)),
        omega=rng.normal(size=(n, *shape, 3)),
        L=rng.normal(size=(n, *shape, 3)),
        L_body=rng.normal(size=(n, *shape, 3)),
        energy=rng.normal(size=(n, *shape)),
    )


MASK_RECORDS = np.array([True, False, True, False, True])
MASK_BODIES = np.array([False, True, True])


@pytest.mark.parametrize(
    ("records", "bodies", "expect_t", "expect"),
    [
        (slice(3), None, lambda t: t[:3], lambda a: a[:3]),
        (slice(None, None, 2), slice(None), lambda t: t[::2], lambda a: a[::2]),
        (slice(None), 1, lambda t: t, lambda a: a[:, 1]),
        ([0, -1], [0, 2], lambda t: t[[0, 4]], lambda a: a[[0, 4]][:, [0, 2]]),
        (2, slice(None), lambda t: t[2:3], lambda a: a[2:3]),
        (MASK_RECORDS, MASK_BODIES, lambda t: t[::2], lambda a: a[::2, 1:]),
    ],
    ids=["first-records", "every-other-record", "one-body", "index-arrays", "one-record", "masks"],
)
def test_take_indexes_records_then_bodies(records, bodies, expect_t, expect) -> None:
    tr = _batch()
    sub = tr.take(records=records, bodies=bodies)
    np.testing.assert_array_equal(sub.t, expect_t(tr.t))
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(sub, name), expect(getattr(tr, name)), err_msg=name)


def test_take_one_body_drops_its_axis_and_keeps_the_record_axis() -> None:
    tr = _batch((2, 3))
    one = tr.take(records=-1, bodies=(1, 2))
    assert one.t.shape == (1,)
    assert one.q.shape == (1, 4)
    assert one.energy.shape == (1,)
    np.testing.assert_array_equal(one.L_body[0], tr.L_body[-1, 1, 2])
    assert tr.take().q.shape == tr.q.shape


def test_take_records_of_one_body_without_batch_axes() -> None:
    tr = _batch().take(bodies=0)
    assert tr.energy.shape == (5,)
    head = tr.take(records=slice(2))
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(head, name), getattr(tr, name)[:2], err_msg=name)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"records": 99}, "records"),
        ({"records": np.True_}, "records"),
        ({"records": [0.5]}, "records"),
        ({"bodies": (Ellipsis, 0)}, "bodies"),
        ({"bodies": (0, 0)}, "bodies"),
        ({"bodies": 7}, "bodies"),
        ({"bodies": None, "records": "first"}, "records"),
    ],
)
def test_take_rejects_bad_indices_naming_the_argument(kwargs, name):
    tr = rigid.simulate(
        np.tile([1.0, 0, 0, 0], (3, 1)), [0.3, -0.8, 0.5], [0.5, 1.0, 1.5], 0.1, 4, "jolt"
    )
    with pytest.raises(InputError, match=f"^{name}: "):
        tr.take(**kwargs)


def test_record_steps_are_every_kth_step_and_the_last() -> None:
    from tumble.trajectory import record_count, record_steps

    assert record_steps(10, 3).tolist() == [0, 3, 6, 9, 10]
    assert record_steps(9, 3).tolist() == [0, 3, 6, 9]
    assert record_count(0, 5) == 1
    tr = rigid.simulate([1.0, 0, 0, 0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], 0.1, 10, "jolt", every=3)
    np.testing.assert_allclose(tr.t, record_steps(10, 3) * 0.1)
    for bad, name in [((-1, 1), "steps"), ((5, 0), "every"), ((5.0, 1), "steps")]:
        with pytest.raises(InputError, match=rf"^{name}: expected an integer"):
            record_count(*bad)
    with pytest.raises(InputError, match=r"^every: expected an integer"):
        record_count(5, None)


@pytest.mark.parametrize(
    ("steps", "every", "name"),
    [(True, 1, "steps"), (3, 2**63, "every"), (2**64, 1, "steps"), (10**12, 1, "steps, every")],
)
def test_regression_record_steps_refuses_bool_overflow_and_huge_counts(steps, every, name):
    # issue 18 campaign: record_steps(True, 2**63) raised OverflowError from NumPy; a
    # count of 10**12 records was allocated without a size check.
    from tumble.trajectory import record_steps

    with pytest.raises(InputError, match=rf"^{name}: "):
        record_steps(steps, every)


def test_regression_record_steps_near_int64_max_does_not_wrap():
    # (n - 1) * every stays below steps, so the largest counts keep exact indices.
    from tumble.trajectory import record_steps

    big = 2**63 - 1
    assert record_steps(big, big - 1).tolist() == [0, big - 1, big]
    assert record_steps(big, big).tolist() == [0, big]


@pytest.mark.parametrize(
    ("records", "bodies", "name"),
    [
        (slice(None, None, 0), None, "records"),  # NumPy's ValueError
        (slice(None), 2**63, "bodies"),  # OverflowError converting to C long
        (slice(None), slice(None, None, 0), "bodies"),
        (slice(None), -(2**63) - 1, "bodies"),
        (2**63, None, "records"),
    ],
)
def test_regression_take_turns_numpys_value_and_overflow_errors_into_named_ones(
    records, bodies, name
):
    with pytest.raises(InputError, match=rf"^{name}: expected "):
        _batch().take(records, bodies)
