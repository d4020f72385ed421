"""Input checks shared by every solver and decoder: potentials, ``u``, lengths, keep vectors, scores.

Each check returns the validated value (float64, C-contiguous arrays) or raises
:class:`~dualdecomp.core.errors.InputError` with a message naming the argument; :func:`check_score`
raises :class:`~dualdecomp.core.errors.SolverError` for an infeasible or overflowing optimum.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from dualdecomp.core.errors import InputError, SolverError

__all__ = ["as_finite", "as_keep", "as_length", "as_padded_u", "as_potentials", "as_u", "check_score",
           "check_components", "float_array"]


def float_array(x: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` as a C-contiguous float64 array without NaN or +inf (-inf is allowed: it forbids a choice).

    Parameters
    ----------
    x : array_like
        The values.
    name : str
        The argument's name, for error messages.
    shape : tuple of int, optional
        The required shape.

    Returns
    -------
    numpy.ndarray
        A C-contiguous float64 array (a copy only when a conversion was needed).

    Raises
    ------
    InputError
        ``x`` is None, complex, not numeric, of the wrong shape, or holds NaN or +inf.
    """
    if x is None:
        raise InputError(f"{name} is required")
    if np.iscomplexobj(x):
        raise InputError(f"{name} must be real-valued, got complex data")
    try:
        arr = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric array: {exc}") from None
    if shape is not None and arr.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {arr.shape}")
    if not (arr < np.inf).all():
        if np.isnan(arr).any():
            raise InputError(f"{name} contains NaN")
        raise InputError(f"{name} contains +inf (only finite values and -inf are allowed)")
    return arr


def as_potentials(array: Any, ndim: int, name: str) -> np.ndarray:
    """Validate path potentials: ``ndim`` equal sides of at least 2 ((n+2,)*ndim), no NaN or +inf.

    Parameters
    ----------
    array : array_like
        The potentials.
    ndim : int
        Required number of dimensions (2 for bigrams, 3 for trigrams).
    name : str
        Name used in error messages.

    Returns
    -------
    numpy.ndarray
        A C-contiguous float64 array.

    Raises
    ------
    InputError
        Wrong shape, non-numeric or complex data, NaN or +inf entries.
    """
    arr = float_array(array, name)
    if arr.ndim != ndim:
        raise InputError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    side = arr.shape[0]
    if side < 2 or any(d != side for d in arr.shape):
        raise InputError(f"{name} must have shape (n+2,)*{ndim} with n >= 0, got {arr.shape}")
    return arr


def as_u(u: Any, n: int) -> np.ndarray:
    """Validate ``u`` (shape (n,), no NaN or +inf; -inf forbids keeping a token); None means zeros."""
    if u is None:
        return np.zeros(n, dtype=np.float64)
    return float_array(u, "u", (n,))


def as_padded_u(u: Any, n: int) -> np.ndarray:
    """:func:`as_u` padded with the boundaries: ``[0, u_1, ..., u_n, 0]`` (shape (n+2,))."""
    ue = np.zeros(n + 2, dtype=np.float64)
    ue[1 : n + 1] = as_u(u, n)
    return ue


def as_finite(x: Any, name: str) -> float:
    """A finite Python float (InputError otherwise)."""
    if isinstance(x, bool | np.bool_):
        raise InputError(f"{name} must be a number, got {x!r}")
    try:
        value = float(x)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} is not a number: {exc}") from None
    if not np.isfinite(value):
        raise InputError(f"{name} must be finite, got {value}")
    return value


def as_length(length: Any, n: int) -> int | None:
    """Validate an exact length: None or an integer in 0..n (InputError otherwise)."""
    if length is None:
        return None
    if isinstance(length, bool | np.bool_) or not isinstance(length, numbers.Integral):
        raise InputError(f"length must be an integer or None, got {length!r}")
    value = int(length)
    if value < 0 or value > n:
        raise InputError(f"length must be between 0 and n={n}, got {value}")
    return value


def as_keep(keep: Any, n: int) -> np.ndarray:
    """Validate a keep vector: shape (n,), boolean or 0/1 values (InputError otherwise)."""
    arr = np.asarray(keep)
    if arr.shape != (n,):
        raise InputError(f"keep must have shape ({n},), got {arr.shape}")
    if arr.dtype != np.bool_:
        if not np.isin(arr, (0, 1)).all():
            raise InputError("keep must contain only booleans or 0/1")
        arr = arr.astype(bool)
    return arr


def check_score(score: float, what: str) -> float:
    """Turn a DP optimum into a Python float; -inf means infeasible, NaN/+inf means overflow."""
    if score == -np.inf:
        raise SolverError(f"no feasible compression: {what} has no structure with a finite score")
    if not np.isfinite(score):
        raise SolverError(f"numerical overflow in the {what} DP (score {score})")
    return float(score)


def check_components(components: Any, length: Any = None) -> tuple[int, int | None]:
    """Validate a decoder's input: a non-empty sequence of components over the same n, and a length.

    Returns
    -------
    (int, int or None)
        ``n`` and the validated length (see :func:`as_length`).

    Raises
    ------
    InputError
        No component, components of different sizes, or a length that is not an integer in 0..n.
    """
    if not components:
        raise InputError("decode needs at least one component")
    n = int(components[0].n)
    if any(int(c.n) != n for c in components):
        raise InputError("all components must be over the same number of tokens")
    return n, as_length(length, n)
