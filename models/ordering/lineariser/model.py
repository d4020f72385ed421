"""The head-domain lineariser: a second ordering model, for inputs whose dependency tree is complete.

Beyond the paper. Its score of an ordered tree is a sum over the tree's head domains (a head with its
dependents) of adjacent-pair, side and boundary features (``lineariser.features``), so the best
projective linearisation of a given tree is the best order of each domain on its own: the Held–Karp DP
of ``dualdecomp.solvers.ordering.domain_order`` finds it exactly (``certified``) when no domain has more
than ``exact_limit`` elements. Trained by the averaged perceptron on the domains of the train treebank
(``lineariser.training``) — each update decodes one domain exactly, so an epoch over EWT train takes
seconds where guided learning of the paper's model takes minutes.

With an LM term of weight λ > 0 (an argument of :meth:`Lineariser.linearise`, held by the decoder as
``lineariser_lm``: the lineariser holds its weights and settings, not the LM) the score adds λ × (KenLM
log10 of the output − the log10 of its parts read alone): the domains are then ordered bottom-up, each by
a beam search over prefixes in which every dependent is the (fixed) string of its subtree, so the result
is APPROXIMATE (``certified=False``).
With ``lm_states > 0`` the exact DP of ``lineariser.exact`` runs first and certifies the optimum of the
score with the LM term when it finishes within that many states.

Missing tags are taken from a dictionary (the most frequent train tag of the word; for unknown words the
most frequent tag of words seen once).

Saved beside the paper's model as ``linearizer.json`` (format, tag dictionary, LM weight, provenance) and
``linearizer.npz`` (non-zero weights, float32; ``dualdecomp.core.model_files``); never pickle.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import read_json, read_sparse_weights, write_json, write_sparse_weights
from dualdecomp.data.ordering.inputs import ROOT
from dualdecomp.models.ordering.lineariser.exact import exact_with_lm
from dualdecomp.models.ordering.lineariser.features import (
    Domain,
    constrained_tables,
    domain_tables,
    sentence_domains,
)
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.solvers.ordering import (
    EXACT_LIMIT,
    beam_domain_order,
    best_domain_order,
    greedy_domain_order,
    order_score,
)

# The files' names and format tag are a file format (shipped in data/word_order_model/): their -ize
# spelling stays so that saved models keep loading (docs/glossary.md).
FORMAT = "dualdecomp-head-domain-linearizer/1"
JSON_NAME = "linearizer.json"
WEIGHTS_NAME = "linearizer.npz"
METHOD_NAME = "head-domain linearizer"  # old spelling kept: output rows' values stay as users may parse them
"""How the ``method`` and ``note`` values of the output rows name the lineariser."""
EXACT_METHOD = f"{METHOD_NAME} (exact)"
APPROXIMATE_METHOD = f"{METHOD_NAME} (approximate)"
LM_BEAM = 32
"""Prefixes kept per step of the LM beam search of a domain."""
EXACT_LM_METHOD = f"{METHOD_NAME} + LM (exact DP)"
LM_STATES = 0
"""States the exact DP with the LM term may build before the beam search takes over (0, the default
chosen on dev: the beam only; docs/word-ordering.md, "The head-domain lineariser")."""


@dataclass(frozen=True)
class Linearised:
    """An ordered tree from :meth:`Lineariser.linearise`.

    Attributes
    ----------
    order : tuple of int
        Input word indices in output order (every word).
    tags : tuple of str
        The tag of each input word that the features used (given or from the dictionary), input order.
    score : float
        The lineariser's score of the output (with the LM term when λ > 0).
    certified : bool
        True when the output is proven to be the lineariser's best linearisation of the tree (no LM,
        every domain solved by the exact DP).
    method : str
    stopped : str
        What the deadline cut short (empty: nothing), e.g. "the head-domain linearizer (2 of 9 head domains
        ordered greedily at the deadline)".
    """

    order: tuple[int, ...]
    tags: tuple[str, ...]
    score: float
    certified: bool
    method: str
    stopped: str = ""


@dataclass(frozen=True)
class Lineariser:
    """Weights, tag dictionary and settings of the head-domain lineariser (no LM: the LM term it decodes
    with is an argument of :meth:`linearise`, held by the decoder bundle as ``lineariser_lm``).

    Attributes
    ----------
    weights : numpy.ndarray
        float64, shape ``(2**hash_bits,)``.
    hash_bits : int
    best_tag : dict
        Word → its most frequent training tag.
    default_tag : str
        Tag of a word missing from ``best_tag``.
    lm_weight : float
        λ selected on dev (0: no LM term); the decoder's LM term takes it
        (``dualdecomp.models.ordering.decoding.load.with_decoding_lm``).
    meta : dict
        Provenance and training log.
    lm_states : int
        With an LM: state limit of the exact DP tried before the beam search (0: the beam only).
    """

    weights: np.ndarray
    hash_bits: int
    best_tag: dict[str, str]
    default_tag: str
    lm_weight: float = 0.0
    meta: dict = field(default_factory=dict)
    lm_states: int = field(default=LM_STATES, compare=False)

    @property
    def mask(self) -> int:
        """``2**hash_bits - 1``."""
        return (1 << self.hash_bits) - 1

    def with_lm(self, lm: OrderingLM | None) -> Lineariser:
        """Deprecated: the same weights bound to ``lm`` (:class:`LineariserWithLM`; None: the lineariser
        alone). Pass the LM to :meth:`linearise` instead (the decoder's ``lineariser_lm``)."""
        warnings.warn("Lineariser.with_lm is deprecated: pass lm= to Lineariser.linearise (the decoder "
                      "bundle's lineariser_lm)", DeprecationWarning, stacklevel=2)
        plain = {f.name: getattr(self, f.name) for f in fields(Lineariser)}
        return Lineariser(**plain) if lm is None else LineariserWithLM(**plain, lm=lm)

    def tags_of(self, words, pos) -> tuple[str, ...]:
        """Given tags, else the dictionary's."""
        best = self.best_tag
        return tuple(p if p is not None else best.get(w, best.get(w.lower(), self.default_tag))
                     for w, p in zip(words, pos, strict=True))

    def domains(self, words, tags, heads) -> list[Domain]:
        """The head domains of a complete tree with this model's hashing (bottom-up)."""
        return sentence_domains(words, tags, heads, self.mask)

    def linearise(self, words, pos, heads, exact_limit: int = EXACT_LIMIT, units=(),
                  deadline: Deadline | None = None, lm: OrderingLM | None = None) -> Linearised:
        """The best projective linearisation of a complete tree (that keeps the ordered units).

        Parameters
        ----------
        words : sequence of str
        pos : sequence of str or None
            Given tags (None: from the dictionary).
        heads : sequence of int
            Every head given (0-based, ``ROOT`` for the root); a tree.
        exact_limit : int
            Larger domains are ordered by beam search (the output is then not certified).
        units : sequence of sequence of int
            Ordered units (``OrderingInput.units``, valid for ``heads``): each comes out contiguous and
            in its order; every decoder here maximises over the linearisations that keep them
            (``lineariser.features.constrained_tables``).
        deadline : Deadline, optional
            The input's deadline: the exact DP with the LM term gives up there, a beam search completes
            its best prefix greedily and the domains not yet ordered are ordered greedily
            (``domain_order.greedy_domain_order``); the Held–Karp DP of a domain is not stopped.
        lm : OrderingLM, optional
            The LM term, its weight λ (the decoder's ``lineariser_lm``); None: the lineariser's score
            alone, ordered exactly.

        Returns
        -------
        Linearised
            Certified without an LM when every domain was solved exactly; with an LM only when the exact
            DP (``lm_states > 0``) finished; never when the deadline cut something short (``stopped``).

        Raises
        ------
        ValueError
            A head is missing.
        """
        if any(h is None for h in heads):
            raise ValueError("the lineariser needs every head")
        tags = self.tags_of(words, pos)
        domains = self.domains(words, tags, heads)
        root = next(k for k, h in enumerate(heads) if h == ROOT)
        if lm is None:
            return self._exact(words, tags, domains, root, exact_limit, units, deadline)
        stopped = ""
        if self.lm_states:
            found = exact_with_lm(words, heads, domains, self.weights, lm, self.lm_states, units=units,
                                  deadline=deadline)
            if found.certified and found.best is not None:
                return Linearised(found.best.words, tags, found.score, True, EXACT_LM_METHOD)
            if found.timed_out:
                stopped = f"the {METHOD_NAME}'s exact DP with its LM term (gave up, no output)"
        return self._with_lm(lm, words, tags, domains, root, units, deadline, stopped)

    def _exact(self, words, tags, domains: list[Domain], root: int, exact_limit: int, units,
               deadline: Deadline | None = None) -> Linearised:
        orders: dict[int, list[int]] = {}
        total, exact, greedy = 0.0, True, 0
        for domain in domains:
            tables = constrained_tables(self.weights, domain, units)
            if deadline is not None and deadline.expired():
                found = greedy_domain_order(*tables, domain.head_index)
            else:
                found = best_domain_order(*tables, domain.head_index, exact_limit, deadline=deadline)
            orders[domain.head] = [domain.elements[k] for k in found.order]
            total += found.score
            exact &= found.exact
            greedy += found.timed_out
        order = _expand(orders, root)
        return Linearised(order, tags, total, exact, EXACT_METHOD if exact else APPROXIMATE_METHOD,
                          _greedy_note(greedy, len(domains)))

    def _with_lm(self, lm: OrderingLM, words, tags, domains: list[Domain], root: int, units,
                 deadline: Deadline | None = None, stopped: str = "") -> Linearised:
        strings: dict[int, tuple[int, ...]] = {}
        total, greedy = 0.0, 0
        for domain in domains:
            side, pair, start, end = constrained_tables(self.weights, domain, units)
            parts = [(x,) if x == domain.head else strings.pop(x, (x,)) for x in domain.elements]
            alone = [lm.phrase(words, p) for p in parts]
            sentence = domain.head == root

            def lm_term(prefix, parts=parts, alone=alone, sentence=sentence) -> float:
                joined = tuple(w for k in prefix for w in parts[k])
                return lm.phrase(words, joined, sentence=sentence) - sum(alone[k] for k in prefix)

            if deadline is not None and deadline.expired():
                found = greedy_domain_order(side, pair, start, end, domain.head_index, bonus=lm_term)
            else:
                found = beam_domain_order(side, pair, start, end, domain.head_index, LM_BEAM, lm_term,
                                          deadline=deadline)
            strings[domain.head] = tuple(w for k in found.order for w in parts[int(k)])
            total += found.score
            greedy += found.timed_out
        if not domains:  # one word: only the sentence start and end
            total = lm.ends(words, (root,))
        order = strings.get(root, (root,))
        notes = tuple(note for note in (stopped, _greedy_note(greedy, len(domains))) if note)
        return Linearised(order, tags, total, False, APPROXIMATE_METHOD, "; ".join(notes))

    def order_score(self, words, pos, heads, order) -> float:
        """The LM-free score of one projective linearisation (input indices in output order)."""
        tags = self.tags_of(words, pos)
        position = {w: k for k, w in enumerate(order)}
        total = 0.0
        for domain in self.domains(words, tags, heads):
            ranked = sorted(range(len(domain)), key=lambda e: position[domain.elements[e]])
            total += order_score(ranked, *domain_tables(self.weights, domain), domain.head_index)
        return total

    # --- persistence ---------------------------------------------------------------------------

    def save(self, directory: str | Path) -> None:
        """Write ``linearizer.json`` and ``linearizer.npz`` into ``directory`` (atomically)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        write_sparse_weights(out / WEIGHTS_NAME, self.weights, dtype=np.float32)
        write_json(out / JSON_NAME, {"format": FORMAT, "hash_bits": self.hash_bits,
                                     "lm_weight": self.lm_weight, "default_tag": self.default_tag,
                                     "best_tag": self.best_tag, "meta": self.meta})


@dataclass(frozen=True)
class LineariserWithLM(Lineariser):
    """Deprecated (what :meth:`Lineariser.with_lm` returns): a lineariser bound to an LM term, which
    :meth:`linearise` uses when given none. The decoder bundle holds the LM term now
    (``OrderingDecoder.lineariser_lm``).

    Attributes
    ----------
    lm : OrderingLM or None
        The LM term used when :meth:`linearise` is given none.
    """

    lm: OrderingLM | None = field(default=None, compare=False, repr=False)

    def linearise(self, words, pos, heads, exact_limit: int = EXACT_LIMIT, units=(),
                  deadline: Deadline | None = None, lm: OrderingLM | None = None) -> Linearised:
        """:meth:`Lineariser.linearise` with the bound LM term when ``lm`` is None."""
        bound = self.lm if lm is None else lm
        return super().linearise(words, pos, heads, exact_limit, units, deadline, bound)


def _greedy_note(greedy: int, domains: int) -> str:
    """What the deadline did to the domains (empty when none was ordered greedily)."""
    if not greedy:
        return ""
    return f"the {METHOD_NAME} ({greedy} of {domains} head domains ordered greedily at the deadline)"


def _expand(orders: dict[int, list[int]], root: int) -> tuple[int, ...]:
    """The sentence of the domain orders (each dependent replaced by its subtree's words)."""
    out: list[int] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:
        node, placed = stack.pop()
        if placed or node not in orders:
            out.append(node)
            continue
        for element in reversed(orders[node]):
            stack.append((element, element == node))
    return tuple(out)


def load_lineariser(directory: str | Path) -> Lineariser | None:
    """The lineariser saved in a model directory, or None when it has none.

    Raises
    ------
    ModelError
        Its files are missing, unreadable, damaged or not a lineariser.
    """
    path = Path(directory)
    if not ((path / JSON_NAME).exists() or (path / JSON_NAME).is_symlink()):  # a link: refused, not skipped
        return None
    doc = read_json(path / JSON_NAME)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"{path / JSON_NAME}: not a head-domain lineariser")
    try:
        bits = int(doc["hash_bits"])
        best_tag = {str(w): str(t) for w, t in doc["best_tag"].items()}
        default_tag, lm_weight = str(doc["default_tag"]), float(doc["lm_weight"])
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise ModelError(f"{path / JSON_NAME}: malformed ({exc})") from None
    if not 1 <= bits <= 30 or not 0 <= lm_weight < float("inf"):
        raise ModelError(f"{path / JSON_NAME}: hash_bits or lm_weight out of range")
    weights = read_sparse_weights(path / WEIGHTS_NAME, 1 << bits)
    return Lineariser(weights, bits, best_tag, default_tag, lm_weight, doc.get("meta", {}))
