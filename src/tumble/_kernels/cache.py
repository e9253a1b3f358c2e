"""numba's on-disk cache, keyed to every kernel source at once.

numba checks a cached function against its own source file only. A kernel that inlines or
calls a function of another file (every loop does: the steps, the torque models and the
rotation formulas live in other modules) would then run stale machine code from the cache
after an edit to that other file. The locators below, which numba consults before its own
for files under this package, stamp every kernel with one hash of all the package's
sources (:func:`sources_stamp`): an edit anywhere under ``_kernels/`` makes every cached
kernel stale, and each recompiles once, on its next use.

The cache directory is numba's choice, unchanged: ``NUMBA_CACHE_DIR`` if set, else the
``__pycache__`` folders beside the sources.

Several processes may fill one cache at once (``tumble precompile --jobs``, sweep workers).
numba numbers the data files of a function by reading its index, picking the first free
number and writing the index, then the data; two processes saving at once can pick the same
number, and a reader can meet an index entry before its data (and load another function's
machine code). :func:`_save` does the same under an exclusive lock on the index, data
first; it replaces numba's for every cached function of the process, which it only makes
safer.

A gufunc is two cache entries: its kernel, and the loop around it, which calls the kernel
by a symbol name that holds a per-process counter (numba issue 10128). Two processes that
compile one gufunc at once can leave the kernel of one beside the loop of the other, and a
third process that loads the pair calls a missing symbol and crashes. :func:`building`
makes the build of a gufunc (load or compile, then save, of both entries) exclusive between
processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from numba.core import caching

#: This package: the sources whose hash stamps every kernel.
PACKAGE = Path(__file__).resolve().parent


@functools.cache
def sources_stamp() -> str:
    """SHA-256 of every ``.py`` file under the kernel package (paths and contents), read
    once per process."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _in_package(py_file: str) -> bool:
    return Path(py_file).resolve().is_relative_to(PACKAGE)


class _PackageStamp:
    """Mixin: accept only the package's files, and stamp them with :func:`sources_stamp`."""

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if not _in_package(py_file):
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]

    def get_source_stamp(self) -> str:
        return sources_stamp()


class UserDirLocator(_PackageStamp, caching.UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR``, when set, for the kernel package."""


class InTreeLocator(_PackageStamp, caching.InTreeCacheLocator):
    """The ``__pycache__`` beside each kernel source."""


def _save(self: Any, key: Any, data: Any) -> None:
    """numba's ``IndexDataCacheFile.save``, safe between processes: under an exclusive
    lock on the index, the data is written before the index entry that names it."""
    with open(self._index_path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(n for i in itertools.count(1) if (n := self._data_name(i)) not in taken)
            overloads[key] = name
        self._save_data(name, data)
        self._save_index(overloads)


@contextlib.contextmanager
def building(func: Callable[..., Any]) -> Iterator[None]:
    """Hold an exclusive lock, between processes, on the cache of the gufunc over ``func``
    while it is built: its kernel and its loop are then loaded, or compiled and saved,
    together."""
    folder = Path(caching.FunctionCache(func)._cache_path)
    with open(folder / f"{func.__qualname__}-gufunc.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def install() -> None:
    """Put the two locators first in numba's list and make saves safe between processes
    (idempotent; numba consults both when a cached function is first compiled, loaded or
    saved)."""
    locators = caching.CacheImpl._locator_classes
    for locator in (InTreeLocator, UserDirLocator):
        if locator not in locators:
            locators.insert(0, locator)
    caching.IndexDataCacheFile.save = _save  # type: ignore[method-assign]
