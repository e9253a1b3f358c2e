"""The shared validation helpers: clean values through, InputError naming the argument."""

import threading

import numpy as np
import pytest

import tumble
from tumble import InputError
from tumble._validate import (
    as_choice,
    as_float_array,
    as_float_dtype,
    as_int,
    as_scalar,
    broadcast_leading,
    check_memory,
    common_dtype,
    current_memory_limit,
    format_bytes,
    rotation_tolerance,
)
from tumble.rotation import random_quat


def test_input_error_is_a_value_error():
    assert issubclass(InputError, ValueError)


def test_integers_promote_to_float64_and_float32_stays():
    assert as_float_array([1, 2, 3], "v", (3,)).dtype == np.float64
    assert as_float_array(np.ones(3, np.float32), "v", (3,)).dtype == np.float32
    assert common_dtype(np.ones(1, np.float32), np.ones(1, np.float64)) == np.float64
    assert common_dtype(np.ones(1, np.float32)) == np.float32


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (np.ones((2, 5)), r"v: expected shape \(\.\.\., 3\), got shape \(2, 5\)"),
        ([1.0, np.nan, 0.0], "v: expected finite values"),
        ([1.0, np.inf, 0.0], "v: expected finite values"),
        (np.array([1j, 0, 0]), "v: expected a real"),
        (np.array([True, False, True]), "v: expected a real"),
        (["a", "b", "c"], "v: expected a real"),
        ([[1.0, 2.0], [1.0]], "v: expected a real array"),
    ],
)
def test_bad_arrays_name_the_argument(value, match):
    with pytest.raises(InputError, match=match):
        as_float_array(value, "v", (3,))


def test_broadcast_names_every_argument():
    a, b = np.ones((4, 3)), np.ones((5, 3))
    assert broadcast_leading(a=(np.ones((1, 3)), 1), b=(b, 1)) == (5,)
    with pytest.raises(InputError, match=r"a \(4,\), b \(5,\)"):
        broadcast_leading(a=(a, 1), b=(b, 1))


def test_scalars_ints_and_choices():
    assert as_scalar(np.float32(0.5), "dt", positive=True) == 0.5
    with pytest.raises(InputError, match=r"dt: expected a positive number, got -1\.0"):
        as_scalar(-1, "dt", positive=True)
    with pytest.raises(InputError, match="dt: expected a number >= 0"):
        as_scalar(-1e-3, "dt", nonnegative=True)
    with pytest.raises(InputError, match="dt: expected a finite number"):
        as_scalar(float("nan"), "dt")
    with pytest.raises(InputError, match="dt: expected a real number"):
        as_scalar(True, "dt")
    with pytest.raises(InputError, match="dt: expected a real number"):
        as_scalar([0.1], "dt")
    assert as_int(np.int64(3), "steps", minimum=0) == 3
    with pytest.raises(InputError, match="steps: expected an integer >= 1, got 0"):
        as_int(0, "steps", minimum=1)
    with pytest.raises(InputError, match="steps: expected an integer"):
        as_int(2.0, "steps")
    assert as_choice("exact", "exp", ("exact", "approx")) == "exact"
    with pytest.raises(InputError, match="exp: expected one of 'exact', 'approx', got 'fast'"):
        as_choice("fast", "exp", ("exact", "approx"))


def test_as_choice_rejects_arrays_and_unhashables():
    """Regression: ``np.array(["jolt"])`` passed ``in`` (elementwise ==) and then failed as
    a dict key with TypeError; longer arrays raised NumPy's ambiguous-truth ValueError."""
    choices = ("jolt", "rk4")
    for bad in (
        np.array(["jolt"]),
        np.array(["jolt", "rk4"]),
        np.array("jolt"),
        ["jolt"],
        {"jolt": 1},
    ):
        with pytest.raises(InputError, match="method: expected one of 'jolt', 'rk4', got"):
            as_choice(bad, "method", choices)
    assert as_choice(np.str_("rk4"), "method", choices) == "rk4"
    assert as_choice(2, "order", (1, 2, 4)) == 2


def test_float_dtypes():
    assert as_float_dtype("float32") == np.float32
    assert as_float_dtype(np.float64) == np.float64
    with pytest.raises(InputError, match="dtype: expected float32 or float64, got int64"):
        as_float_dtype(np.int64)
    with pytest.raises(InputError, match="dtype: expected float32 or float64, got 'foo'"):
        as_float_dtype("foo")


def test_random_quat_names_a_bad_dtype():
    # Regression: an unparseable dtype used to escape as NumPy's TypeError.
    with pytest.raises(InputError, match="dtype: expected float32 or float64"):
        random_quat(3, 0, dtype="foo")


# ------------------------------------------------------------ the resource rule and as_int


def test_memory_limit_is_context_local_and_restored():
    assert current_memory_limit() == tumble.DEFAULT_MEMORY_LIMIT == 2 * 1024**3
    with tumble.memory_limit(100) as limit:
        assert limit == current_memory_limit() == 100
        with pytest.raises(InputError, match=r"n: 1 KiB of things would take 1 KiB, more than"):
            check_memory(1024, "n", "1 KiB of things")
        seen = []
        worker = threading.Thread(target=lambda: seen.append(current_memory_limit()))
        worker.start()
        worker.join()
        assert seen == [tumble.DEFAULT_MEMORY_LIMIT]  # another thread keeps the default
    assert current_memory_limit() == tumble.DEFAULT_MEMORY_LIMIT
    check_memory(tumble.DEFAULT_MEMORY_LIMIT, "n", "exactly the limit")
    with pytest.raises(InputError, match="nbytes: expected an integer >= 0"):
        with tumble.memory_limit(-1):
            pass


def test_memory_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("TUMBLE_MEMORY_LIMIT", str(10 * 1024**3))
    assert current_memory_limit() == 10 * 1024**3
    check_memory(9 * 1024**3, "n", "nine GiB")


def test_format_bytes():
    assert format_bytes(0) == "0 bytes"
    assert format_bytes(1023) == "1023 bytes"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(112 * 10**9) == "104 GiB"
    assert format_bytes(2.0**70) == "1.05e+06 PiB"


def test_as_int_caps_at_int64_unless_told_otherwise():
    assert as_int(2**63 - 1, "n") == 2**63 - 1
    with pytest.raises(InputError, match=f"n: expected an integer <= {2**63 - 1}, got {2**63}"):
        as_int(2**63, "n")
    assert as_int(2**70, "n", maximum=None) == 2**70


def test_regression_random_quat_size_checked_before_allocating():
    # random_quat((10**6, 10**6)) asked NumPy for 29 TiB.
    with pytest.raises(InputError, match=r"shape: \(1000000, 1000000\) random quaternions would"):
        random_quat((10**6, 10**6))
    with pytest.raises(InputError, match="shape: expected an integer <="):
        random_quat(2**64)
    with tumble.memory_limit(64 * 1000):
        assert random_quat(1000, rng=1).shape == (1000, 4)
        with pytest.raises(InputError, match="shape: "):
            random_quat(1001, rng=1)


def test_regression_rotation_tolerance_validates_its_arguments():
    # rotation_tolerance("foo", -1) gave NumPy's TypeError; an int dtype or n <= 0 gave
    # a meaningless number.
    with pytest.raises(InputError, match="dtype: expected float32 or float64"):
        rotation_tolerance("foo", 3)
    with pytest.raises(InputError, match="dtype: expected float32 or float64"):
        rotation_tolerance(np.int64, 3)
    with pytest.raises(InputError, match="n: expected an integer >= 1"):
        rotation_tolerance(np.float64, 0)
    assert rotation_tolerance(np.float64, 3) == 3 * 8 * float(np.finfo(np.float32).eps)
