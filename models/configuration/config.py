"""Configurations: which trained components a compressor combines, with what weights.

A configuration is a model directory's ``config.json`` (:class:`JointModel` loads it, :class:`JointConfig`
is its content: public names kept from before the folder was called ``configuration``)::

    {"format": "dualdecomp-config", "version": 1, "name": "McDonald+LM",
     "components": [{"kind": "bigram", "path": "bigram", "weight": 1.0},
                    {"kind": "lm", "path": "lm.binary", "weight": 2.0},
                    {"kind": "dependency", "path": "dependency", "weight": 1.0}],
     "decode": {"max_iterations": 200, "length_method": "exact"},
     "fallback": {"max_tokens": 80, "components": [0]}, "length_bias": 0.0}

``max_tokens`` (optional) is the configuration's own size bound, for a configuration whose cost grows
too fast for its measured default (the ILP reference): a longer sentence is refused with an
:class:`~dualdecomp.core.errors.InputError` (a per-line error row in a batch) unless ``--max-tokens`` is
given explicitly, which overrides it (:meth:`JointModel.check_size`, called by the compressor).
``growth`` (optional) is the configuration's measured growth of time and memory with the length and the
default length limit it gives (:mod:`dualdecomp.models.configuration.growth`, written by
``benchmarks/memory.py --fit --write``); ``--max-tokens`` overrides that limit.
``length_bias`` (optional) is a score added per kept token (:func:`with_length_bias`): it changes no
fixed-length result and sets the free-length compression rate
(:mod:`dualdecomp.models.length_bias.calibration`).
``path`` is relative to the directory (a model directory, or the KenLM file for ``lm``). A component may
carry ``"options"``, keyword arguments of its kind's loader (for ``neural``: ``{"backend": "onnx-int8"}``,
the int8 encoder of :func:`dualdecomp.models.neural.store.load_neural_model`); an option its loader does
not take is a :class:`~dualdecomp.core.errors.ModelError`. Every component's
potentials are multiplied by its weight (for ``transducer``, a T3 model directory from ``dualdecomp t3
train``: every hyperedge's rule score, so the component scores weight × the T3 score; its source tree is
built from the sentence's dependency parse); the engine (:func:`dualdecomp.decode`) maximises their sum.
For a sentence longer than ``fallback.max_tokens`` only the listed (cheaper) components are used, and the
output says so. ``decode`` holds the engine's options (:class:`dualdecomp.engine.options.DecodeOptions`), or
``{"decoder": "ilp", "solver": "cbc"}`` for the exact ILP (slow; the reference), or ``{"decoder": "beam",
"beam": 100}`` for a transducer + lm pair decoded by the paper's APPROXIMATE beam search (a baseline: never
certified, see :mod:`dualdecomp.solvers.transducer.lm_beam`). A directory may
hold other configurations as ``configs/NAME.json`` (``dualdecomp compress --config NAME``). A
configuration may name another of the same directory as its ``"base"``
(``{"base": "neural-mcdonald", "name": "...", "length_bias": 0.28}``): it is that configuration with
the keys it gives replaced (one level: a base has no base of its own), so the per-corpus length
configurations do not copy their family's components and weights. Everything is validated on load
(:class:`~dualdecomp.core.errors.ModelError`).
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dualdecomp.core.component import length_bias_taker, merged_sums
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import (
    atomic_write_bytes,
    path_inside,
    read_json,
    verify_directory,
    verify_file,
    write_manifest,
)
from dualdecomp.data.sentence import Sentence
from dualdecomp.engine.decoders import check_decode_block
from dualdecomp.models.configuration.growth import Growth, parse_growth
from dualdecomp.models.registry import get_kind, kind_names

FORMAT = "dualdecomp-config"
VERSION = 1


@dataclass(frozen=True)
class ComponentSpec:
    """One component of a configuration."""

    kind: str
    path: str
    weight: float = 1.0
    options: dict = field(default_factory=dict)  # keyword arguments of the kind's loader

    def to_json(self) -> dict:
        """The component's entry in ``config.json``."""
        out = {"kind": self.kind, "path": self.path, "weight": self.weight}
        if self.options:
            out["options"] = dict(self.options)
        return out


@dataclass(frozen=True)
class JointConfig:
    """A configuration (see the module docstring)."""

    name: str
    components: tuple[ComponentSpec, ...]
    decode: dict = field(default_factory=dict)
    fallback_max_tokens: int | None = None
    fallback_components: tuple[int, ...] = ()
    length_bias: float = 0.0
    max_tokens: int | None = None
    growth: Growth | None = None

    def to_json(self) -> dict:
        """The ``config.json`` content."""
        out = {"format": FORMAT, "version": VERSION, "name": self.name,
               "components": [c.to_json() for c in self.components],
               "decode": self.decode}
        if self.fallback_max_tokens is not None:
            out["fallback"] = {"max_tokens": self.fallback_max_tokens,
                               "components": list(self.fallback_components)}
        if self.length_bias:
            out["length_bias"] = self.length_bias
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.growth is not None:
            out["growth"] = self.growth.to_json()
        return out


def parse_config(spec: object, where: str = "config.json") -> JointConfig:
    """Validate a decoded ``config.json``."""
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ModelError(f"{where}: not a dualdecomp joint configuration")
    if spec.get("version") != VERSION:
        raise ModelError(f"{where}: configuration version {spec.get('version')!r} is not supported")
    comps = spec.get("components")
    if not isinstance(comps, list) or not comps:
        raise ModelError(f"{where}: components must be a non-empty list")
    parsed = []
    for i, c in enumerate(comps):
        if not isinstance(c, dict) or c.get("kind") not in kind_names() or not isinstance(c.get("path"), str):
            raise ModelError(f"{where}: component {i} needs a kind in {kind_names()} and a path")
        weight = c.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not np.isfinite(weight) \
                or weight <= 0:
            raise ModelError(f"{where}: component {i} weight must be a positive number")
        options = c.get("options", {})
        if not isinstance(options, dict) or not all(
                isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in options.items()):
            raise ModelError(f"{where}: component {i} options must be an object of names to plain values")
        parsed.append(ComponentSpec(c["kind"], c["path"], float(weight), dict(options)))
    decode = spec.get("decode", {})
    if not isinstance(decode, dict):
        raise ModelError(f"{where}: decode must be an object")
    if decode.get("decoder") == "beam" and sorted(c.kind for c in parsed) != ["lm", "transducer"]:
        raise ModelError(f"{where}: the beam decoder needs exactly one transducer and one lm component")
    try:  # the decoder's name and options, checked once at load by the engine's schemas
        check_decode_block(decode)
    except InputError as exc:
        raise ModelError(f"{where}: {exc}") from None
    fb = spec.get("fallback")
    max_tokens, fb_comps = None, ()
    if fb is not None:
        if not isinstance(fb, dict) or not isinstance(fb.get("max_tokens"), int) or fb["max_tokens"] < 1:
            raise ModelError(f"{where}: fallback needs max_tokens >= 1")
        fb_list = fb.get("components", [])
        if not isinstance(fb_list, list) or not fb_list or not all(
                isinstance(k, int) and 0 <= k < len(parsed) for k in fb_list):
            raise ModelError(f"{where}: fallback components must be indices of components")
        max_tokens, fb_comps = fb["max_tokens"], tuple(fb_list)
    name = spec.get("name", "")
    bias = spec.get("length_bias", 0.0)
    if isinstance(bias, bool) or not isinstance(bias, int | float) or not np.isfinite(bias):
        raise ModelError(f"{where}: length_bias must be a finite number")
    if bias and not any(get_kind(c.kind).takes_length_bias() for c in parsed):
        takers = [k for k in kind_names() if get_kind(k).takes_length_bias()]
        raise ModelError(f"{where}: length_bias needs a {', '.join(takers[:-1])} or {takers[-1]} component")
    limit = spec.get("max_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ModelError(f"{where}: max_tokens must be a positive integer")
    growth = None if spec.get("growth") is None else parse_growth(spec["growth"], where, max_tokens or 1)
    return JointConfig(str(name), tuple(parsed), decode, max_tokens, fb_comps, float(bias), limit, growth)


def _valid_name(config: object) -> bool:
    return isinstance(config, str) and bool(config) and "/" not in config and "\\" not in config \
        and "\0" not in config and not config.startswith(".")


def config_names(directory: Path) -> list[str]:
    """The names of the configurations in ``directory/configs`` (sorted)."""
    return sorted(p.stem for p in (directory / "configs").glob("*.json"))


def _available(directory: Path) -> str:
    names = config_names(directory)
    return f"configurations here: {', '.join(names)}" if names else "this model directory has none"


def config_path(directory: Path, config: str | None) -> Path:
    """``config.json`` of ``directory`` (``config=None``) or ``configs/CONFIG.json``.

    Raises
    ------
    InputError
        A name that is empty, has a path separator or starts with a dot (bad input: ``--config``).
    """
    if config is None:
        return directory / "config.json"
    if not _valid_name(config):
        raise InputError(f"invalid configuration name {config!r} ({_available(directory)})")
    return directory / "configs" / f"{config}.json"


def _read_spec(path: Path, requested: str | None = None) -> object:
    """The JSON of a configuration file (:func:`~dualdecomp.core.model_files.read_json`).

    Raises
    ------
    InputError
        ``requested`` (the name the user gave) names no configuration of the directory.
    ModelError
        The file is missing (``config.json``, a base), refused, unreadable or not JSON.
    """
    directory = path.parent.parent if requested is not None else path.parent
    if requested is not None and not os.path.lexists(path):
        raise InputError(f"unknown configuration {requested!r} in {directory} ({_available(directory)})")
    return read_json(path)


class JointModel:
    """The loaded components of a configuration.

    Parameters
    ----------
    directory : path
        The directory holding the component models and ``config.json``.
    config : str, optional
        The name of another configuration of the same directory: ``configs/NAME.json``.
    """

    def __init__(self, directory: str | os.PathLike[str], config: str | None = None) -> None:
        d = Path(directory)
        if not d.is_dir():
            raise ModelError(f"model directory not found: {d}")
        path = config_path(d, config)
        verify_directory(d)  # every listed file, before any is read
        spec = _read_spec(path, config)
        base_path = None
        self._components_from = path  # the file whose "components" are loaded (named in path errors)
        if isinstance(spec, dict) and "base" in spec:
            base_name = spec["base"]
            if not isinstance(base_name, str) or base_name == config:
                raise ModelError(f"{path}: base must name another configuration of the directory")
            if not _valid_name(base_name):
                raise ModelError(f"{path}: base {base_name!r} is an invalid configuration name")
            base_path = config_path(d, base_name)
            try:
                base = _read_spec(base_path)
            except ModelError as exc:
                raise ModelError(f"{path}: its base: {exc}") from None
            if not isinstance(base, dict) or "base" in base:
                raise ModelError(f"{path}: its base {base_path.name} must be a configuration without a base")
            if "components" not in spec:
                self._components_from = base_path
            spec = {**base, **{k: v for k, v in spec.items() if k != "base"}}
        self.config = parse_config(spec, str(path))
        self.directory = d
        self.models = [self._load(c) for c in self.config.components]
        verify_file(path)  # after the content's own checks (the specific message first)
        if base_path is not None:
            verify_file(base_path)

    def _load(self, c: ComponentSpec):
        path = path_inside(self.directory, c.path, self._components_from)
        if not c.options:
            return get_kind(c.kind).load(path)
        accepted = inspect.signature(get_kind(c.kind).load).parameters
        unknown = sorted(set(c.options) - {k for k in accepted if k != "path"})
        if unknown:
            raise ModelError(f"{c.path}: the {c.kind} loader takes no option {', '.join(unknown)}")
        return get_kind(c.kind).load(path, **c.options)

    def check_size(self, n: int) -> None:
        """Raise :class:`~dualdecomp.core.errors.InputError` when ``n`` tokens exceed the configuration's
        own ``max_tokens``."""
        limit = self.config.max_tokens
        if limit is not None and n > limit:
            name = self.config.name or "this configuration"
            raise InputError(f"sentence of {n} tokens is longer than the configuration's max_tokens {limit} "
                             f"({name}: its memory and time grow faster than n^3): split it, or use "
                             "another configuration")

    def components(self, sentence: Sentence, length_bias: float | None = None,
                   deadline: Deadline | None = None) -> tuple[list, str | None]:
        """The weighted components of ``sentence`` and a note when the long-sentence fallback is used.

        ``length_bias`` (default: the configuration's) is added per kept token (:func:`with_length_bias`).
        ``deadline`` is checked between the components' potentials and inside those of the timed kinds
        (``lm``, ``dependency``: :attr:`~dualdecomp.models.registry.ComponentKind.timed`) (a
        :class:`~dualdecomp.core.deadline.TimeLimitError` once passed: no compression can be decoded
        without them all).
        """
        cfg = self.config
        chosen = range(len(cfg.components))
        note = None
        if cfg.fallback_max_tokens is not None and sentence.n > cfg.fallback_max_tokens:
            chosen = cfg.fallback_components
            names = "+".join(cfg.components[k].kind for k in chosen)
            note = f"{sentence.n} tokens > {cfg.fallback_max_tokens}: decoded with {names} only"
        out = []
        for k in chosen:
            spec, model = cfg.components[k], self.models[k]
            if deadline is not None and out:
                deadline.check(f"computing the potentials (before the {spec.kind} component)")
            potentials = get_kind(spec.kind).potentials_of(model, sentence, deadline)
            out.append(weighted_component(spec.kind, potentials, spec.weight))
        out = merged_sums(out)  # e.g. McDonald's bigram model beside a neural pair head
        bias = cfg.length_bias if length_bias is None else length_bias
        return (with_length_bias(out, bias) if bias else out), note


def weighted_component(kind: str, potentials, weight: float):
    """The decoding component of one kind whose score is ``weight`` × the model's score.

    ``potentials`` is the model's output at weight 1 (:attr:`ComponentKind.potentials
    <dualdecomp.models.registry.ComponentKind>`): the bigram potentials B (``bigram``), the trigram tensor
    T (``lm``), the pair (A, S) (``dependency``), the scorer's scores (``neural``) or a T3 component
    (``transducer``).
    """
    return get_kind(kind).weighted(potentials, weight)


def with_length_bias(components: list, bias: float) -> list:
    """The components with ``bias`` added to the score of every compression per kept token.

    The bias goes into the component that takes it (capability ``length_bias``,
    :func:`~dualdecomp.core.component.length_bias_taker`): the first bigram path (every finite pair
    potential: ``bias · (L + 1)`` for L kept tokens), or else the first dependency component (every
    finite arc: ``bias · L``), or else the first per-token component (``neural``: every keepable token).
    At a fixed length this adds a constant (no compression changes); at free length it moves the
    compression rate (:mod:`dualdecomp.models.length_bias.calibration`). Components that take none are
    returned unchanged.
    """

    out = list(components)
    k = length_bias_taker(out)
    if k is not None:
        out[k] = out[k].with_length_bias(bias)
    return out


def save_config(config: JointConfig, directory: str | os.PathLike[str], name: str | None = None) -> Path:
    """Write ``config.json`` (or ``configs/NAME.json``) into ``directory``; the component files must be put
    there too."""
    d = Path(directory)
    path = d / "config.json" if name is None else d / "configs" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config.to_json(), indent=2) + "\n"
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))  # the old file or the new one
    write_manifest(d)
    return path
