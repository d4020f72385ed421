r"""Training the dependency compression model (structured averaged perceptron, exact parser in the loop).

Gold structures
---------------
A reference compression gives a kept set (the deletion alignment ``dualdecomp.data.alignment.align``) and a
tree: the spaCy parse of the compression tokens *as a sentence of their own*
(``dualdecomp.data.parsing.parse_tokens``),
mapped to source positions through the alignment (the mapping preserves order; root arcs map to h = 0).
The parsers of ``dualdecomp.solvers.dependency.solver`` only produce trees that are projective over root +
kept tokens, while spaCy's parser (pseudo-projective) can return non-projective trees, so the mapped tree is
**projectivised by lifting** (Nivre & Nilsson 2005): while some arc is non-projective, the shortest one
(leftmost on ties) h → m is replaced by head(h) → m. An arc from the root is always projective, so this
ends. Lifting changes as few arcs as possible and keeps the compression's own analysis elsewhere; the
alternative — the tree *induced by the source parse* (each kept token hangs from its nearest kept
ancestor in the source tree, or from the root) — is used when ``gold_tree="source"`` and as a fallback
when some compression token cannot be aligned (never for corpora read by
``dualdecomp.data.jsonl.read_corpus``,
which checks that compressions are subsequences). Its tree can be non-projective too (the source parse
may be) and is lifted the same way. :class:`GoldStats` counts each case; the counts go to the model meta.

Decoding in the loop
--------------------
``dualdecomp.solvers.dependency.solver.solve(A, S=S)`` decides the kept set and the tree jointly. At free
length it is used as is (``lam = 0``; the ``keep_bias`` feature learns the length). At gold length
(``length_mode="gold"``, the default, as evaluation is at gold length) the length constraint is relaxed with
the parser's ``lam`` argument (the note's section 6): the kept length of the argmax at ``lam`` is
non-increasing in ``lam``, and :func:`search_multiplier` searches ``lam`` with
:func:`dualdecomp.engine.length.search_exact_multiplier` — doubling steps to bracket the length, then the
point where the lines ``F(z) − lam·|z|`` of the two bracketing optima cross (this ends: there are finitely
many lines and each new optimum lies above both). An optimum found this way with exactly the gold length is
the best structure of that length. But the best score as a function of the length is often not concave for
this model (keeping a word can require keeping its head), so often no ``lam`` gives the gold length (a
duality gap: about half of the sentences in our runs). Then :func:`decode_at_length` hands the exact-length
problem to the engine, ``dualdecomp.decode([Dependency(A, S=S)], length=L)`` — the same multiplier plus
branch and bound on positions with forcing u-terms, which certifies optimality — and takes the best tree
over its kept tokens (:func:`best_tree`: the parser with ``u = +M`` on kept and ``-inf`` on dropped tokens).
Only if that finds no keep of the length (time limit) is the structure of the closest length used (ties: the
longer one). ``engine_in_loop=False`` skips the engine inside the perceptron loop (faster; the update is
then made against the closest length); dev scoring always uses it. The shares of exact and certified decodes
are logged.

Epoch selection
---------------
After each epoch the averaged weights decode the dev items at each reference's length and are scored by
bigram F1 (``dualdecomp.app.evaluation.bigram_f1``, mean over references, then sentences, then dev files);
the best epoch is kept. Finally the free-length rate is calibrated: ``lam*`` such that free-length
outputs keep the references' share of tokens (mean over dev files) is folded into the ``keep_bias``
weight (no effect at a fixed length).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.solution import Solution
from dualdecomp.data.alignment import align, keep_vector
from dualdecomp.data.jsonl import CorpusItem, read_corpora
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.data.sentence import Sentence
from dualdecomp.engine.decode import decode
from dualdecomp.engine.length import search_exact_multiplier
from dualdecomp.models.dependency.features import DependencyFeatures, ancestry, keep_bias_index
from dualdecomp.models.dependency.model import DependencyModel
from dualdecomp.models.evaluation import bigram_f1, token_f1
from dualdecomp.models.perceptron import EpochReport, averaged_perceptron
from dualdecomp.models.rate_bisection import bisect_rate
from dualdecomp.solvers.dependency import Dependency, SiblingScores, as_sibling_scores, solve

LENGTH_MODES = ("free", "gold")
GOLD_TREES = ("compression", "source")
ORIGINS = ("projective", "lifted", "source", "source_lifted")


@dataclass(frozen=True)
class DependencyTrainingConfig:
    """Hyper-parameters of dependency-model training.

    Attributes
    ----------
    epochs : int
        Perceptron passes.
    hash_bits : int
        log2 of the weight-vector size.
    lexical : bool
        Word-identity features.
    second_order : bool
        Sibling features (second-order parser).
    length_mode : {"gold", "free"}
        Decode at each reference's length (λ search) or at free length inside the loop.
    gold_tree : {"compression", "source"}
        Gold tree: the compression's own parse (lifted to projective) or the source-induced tree.
    limit : int or None
        Use the first ``limit`` sentences of each training file.
    dev_limit : int or None
        Use the first ``dev_limit`` sentences of each dev file.
    engine_in_loop : bool
        At gold length, solve duality gaps exactly with the engine inside the perceptron loop (else
        train on the closest length the multiplier search finds).
    calibrate : bool
        Calibrate the free-length rate on dev after training.
    seed : int
        Seed of the perceptron's shuffling.
    """

    epochs: int = 10
    hash_bits: int = 22
    lexical: bool = True
    second_order: bool = False
    length_mode: str = "gold"
    gold_tree: str = "compression"
    limit: int | None = None
    dev_limit: int | None = None
    engine_in_loop: bool = True
    calibrate: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.length_mode not in LENGTH_MODES:
            raise InputError(f"length_mode must be one of {LENGTH_MODES}, not {self.length_mode!r}")
        if self.gold_tree not in GOLD_TREES:
            raise InputError(f"gold_tree must be one of {GOLD_TREES}, not {self.gold_tree!r}")
        if not 8 <= self.hash_bits <= 26:
            raise InputError(f"hash_bits must be in [8, 26], got {self.hash_bits}")
        if self.epochs < 1:
            raise InputError(f"epochs must be >= 1, got {self.epochs}")


# --------------------------------------------------------------------------------------------------
# gold structures


@dataclass(frozen=True)
class GoldStructure:
    """A reference compression as a parser structure.

    Attributes
    ----------
    heads : numpy.ndarray
        int (n,): head of each source token (0 = root), -1 if dropped (like ``Solution.heads``).
    tokens : tuple of str
        The reference's tokens.
    origin : str
        ``"projective"`` (the compression's parse as is), ``"lifted"`` (projectivised), ``"source"`` or
        ``"source_lifted"`` (the source-induced tree, as is or projectivised).
    """

    heads: np.ndarray
    tokens: tuple[str, ...]
    origin: str

    @property
    def keep(self) -> np.ndarray:
        """bool (n,): the kept tokens."""
        return self.heads >= 0

    @property
    def length(self) -> int:
        """Number of kept tokens."""
        return int(np.count_nonzero(self.heads >= 0))


def projectivise(heads: np.ndarray) -> tuple[np.ndarray, int]:
    """Make a tree projective by lifting its shortest non-projective arc until none is left.

    Parameters
    ----------
    heads : numpy.ndarray
        int (L+1,) over local nodes 0..L, ``heads[0] = -1``: a tree rooted at 0.

    Returns
    -------
    heads : numpy.ndarray
        A projective tree (arcs from the root are always projective, so lifting ends).
    lifts : int
        Number of lifting steps.
    """
    heads = np.asarray(heads, dtype=np.int64).copy()
    lifts = 0
    while True:
        _, up = ancestry(heads)
        worst: tuple[int, int] | None = None
        for m in range(1, len(heads)):
            h = int(heads[m])
            lo, hi = min(h, m), max(h, m)
            if hi - lo > 1 and not np.all(up[h, lo + 1 : hi] > 0):
                if worst is None or hi - lo < worst[0]:
                    worst = (hi - lo, m)
        if worst is None:
            return heads, lifts
        m = worst[1]
        heads[m] = heads[heads[m]]
        lifts += 1


def induced_heads(source_heads: Sequence[int], keep: np.ndarray) -> np.ndarray:
    """The tree the source parse induces on the kept tokens: each hangs from its nearest kept ancestor.

    Parameters
    ----------
    source_heads : sequence of int
        1-based heads of the source tokens (0 = root), as ``Sentence.heads``.
    keep : numpy.ndarray
        bool (n,).

    Returns
    -------
    numpy.ndarray
        int (n,): head position of each kept token (0 = root), -1 for dropped tokens.
    """
    n = len(keep)
    out = np.full(n, -1, dtype=np.int64)
    for m in np.flatnonzero(keep) + 1:
        h, steps = source_heads[m - 1], 0
        while h != 0 and not keep[h - 1] and steps <= n:
            h, steps = source_heads[h - 1], steps + 1
        out[m - 1] = h if steps <= n else 0
    return out


def _lifted(heads: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, int]:
    """Projectivise a position-level structure (via local indices over root + kept tokens)."""
    nodes = np.concatenate(([0], np.flatnonzero(keep) + 1))
    local = np.full(len(keep) + 1, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    lh = np.concatenate(([-1], local[heads[nodes[1:] - 1]]))
    lh, lifts = projectivise(lh)
    out = np.full(len(keep), -1, dtype=np.int64)
    out[nodes[1:] - 1] = nodes[lh[1:]]
    return out, lifts


def gold_structure(source: Sentence, tokens: Sequence[str], parse: Sentence | None = None,
                   tree: str = "compression") -> GoldStructure:
    """The gold structure of one reference compression (module docstring).

    Parameters
    ----------
    source : Sentence
        The parsed source sentence.
    tokens : sequence of str
        The reference compression's tokens (a deletion compression of the source).
    parse : Sentence, optional
        The spaCy parse of ``tokens`` as a sentence of their own; required for ``tree="compression"``.
    tree : {"compression", "source"}
        Which tree to use (``"compression"`` falls back to ``"source"`` when a token cannot be aligned).

    Returns
    -------
    GoldStructure
    """
    if tree not in GOLD_TREES:
        raise InputError(f"tree must be one of {GOLD_TREES}, not {tree!r}")
    tokens = tuple(tokens)
    links = align(source.tokens, tokens)
    if tree == "compression" and all(a is not None for a in links):
        if parse is None or parse.tokens != tokens:
            raise InputError("gold_structure needs the parse of the compression tokens")
        pos = np.array([0, *(int(a) + 1 for a in links)], dtype=np.int64)  # local → source position
        lh, lifts = projectivise(np.array([-1, *parse.heads], dtype=np.int64))
        heads = np.full(source.n, -1, dtype=np.int64)
        heads[pos[1:] - 1] = pos[lh[1:]]
        return GoldStructure(heads, tokens, "lifted" if lifts else "projective")
    keep = keep_vector(source.tokens, tokens)
    heads, lifts = _lifted(induced_heads(source.heads, keep), keep)
    return GoldStructure(heads, tokens, "source_lifted" if lifts else "source")


# --------------------------------------------------------------------------------------------------
# decoding at a given length


@dataclass(frozen=True)
class LengthDecode:
    """Outcome of :func:`decode_at_length`.

    Attributes
    ----------
    keep : numpy.ndarray
        bool (n,): the kept tokens.
    heads : numpy.ndarray
        int (n,): head of each kept token (0 = root), -1 for dropped tokens.
    exact : bool
        Whether it keeps exactly the requested number of tokens.
    certified : bool
        Whether it is proved to be the best structure with that many tokens.
    method : str
        ``"lambda"`` (found by the multiplier search), ``"engine"`` (``dualdecomp.decode``) or
        ``"closest"`` (neither found the length: the structure of the closest length seen).
    solves : int
        Parser calls of the multiplier search.
    """

    keep: np.ndarray
    heads: np.ndarray
    exact: bool
    certified: bool
    method: str
    solves: int


def search_multiplier(A: np.ndarray, S: np.ndarray | None, length: int,
                      max_solves: int = 60) -> tuple[Solution, float, list[Solution]]:
    """Search the parser's length multiplier for an optimum with ``length`` kept tokens.

    :func:`dualdecomp.engine.length.search_exact_multiplier` (same returns: the solution, its multiplier
    and every optimum computed) over the parser ``solve(A, S=S, lam=lam)``, whose own score is
    ``score + lam·|z|``; ``max_solves`` caps the parser calls.
    """
    return search_exact_multiplier(lambda lam: solve(A, S=S, lam=lam), length, max_solves)


def best_tree(A: np.ndarray, S: np.ndarray | SiblingScores | None, keep: np.ndarray) -> np.ndarray:
    """Heads of the best tree over root + exactly the kept tokens (the parser with forcing u-terms).

    ``u = +M`` on kept tokens and ``-inf`` on the others, with M larger than any difference of tree
    scores, so the optimum keeps exactly ``keep`` and maximises Σ A + Σ S over its trees.

    Returns
    -------
    numpy.ndarray
        int (n,): heads (0 = root), -1 for dropped tokens.
    """
    keep = np.asarray(keep, dtype=bool)
    n = len(keep)
    finite = np.abs(A[np.isfinite(A)])
    bound = float(finite.max()) if finite.size else 0.0
    if S is not None:
        bound += as_sibling_scores(S, n).abs_bound()
    big = 1.0 + 4.0 * (n + 1) * bound
    sol = solve(A, S=S, u=np.where(keep, big, -np.inf))
    if not np.array_equal(sol.keep, keep):  # pragma: no cover - guarded by the choice of M
        raise SolverError("forced parse did not keep the requested tokens")
    return sol.heads


def decode_at_length(A: np.ndarray, S: np.ndarray | None, length: int, max_solves: int = 60,
                     engine: bool = True, time_limit: float | None = 2.0) -> LengthDecode:
    """Best structure with exactly ``length`` kept tokens.

    First :func:`search_multiplier` (one parser call per multiplier; an optimum of the right length
    found this way is the best of that length). On a duality gap, the exact-length problem goes to the
    engine, ``dualdecomp.decode([Dependency(A, S=S)], length=length)`` (bisection on the multiplier and
    branch and bound on positions with forcing u-terms; certified when it proves optimality), and the
    tree over its kept tokens is :func:`best_tree`. Without the engine (``engine=False``), or if it
    finds no keep of the length, the structure of the closest length seen is returned.

    Parameters
    ----------
    A, S : numpy.ndarray
        Potentials of ``dualdecomp.solvers.dependency.solver.solve`` (S may be None).
    length : int
        Required number of kept tokens, 0..n.
    max_solves : int
        Cap on parser calls of the multiplier search.
    engine : bool
        Whether to call the engine on a gap.
    time_limit : float or None
        Time limit of the engine (seconds).

    Returns
    -------
    LengthDecode
    """
    n = A.shape[0] - 1
    if not 0 <= length <= n:
        raise InputError(f"length {length} out of range 0..{n}")
    sol, _, seen = search_multiplier(A, S, length, max_solves)
    if sol.length == length:
        return LengthDecode(sol.keep, sol.heads, True, True, "lambda", len(seen))
    if engine:
        result = decode([Dependency(A, S=S)], length=length, time_limit=time_limit)
        if int(result.keep.sum()) == length:
            keep = np.asarray(result.keep, dtype=bool)
            return LengthDecode(keep, best_tree(A, S, keep), True, bool(result.certified), "engine",
                                len(seen))
    return LengthDecode(sol.keep, sol.heads, False, False, "closest", len(seen))


# --------------------------------------------------------------------------------------------------
# data preparation and scoring


@dataclass(frozen=True)
class DependencyItem:
    """A corpus item with its parse, features and gold structures (one per reference)."""

    item: CorpusItem
    sentence: Sentence
    features: DependencyFeatures
    golds: tuple[GoldStructure, ...]


def prepare_items(items: Sequence[CorpusItem], shell: DependencyModel, tree: str = "compression",
                  progress: Callable[[int], None] | None = None) -> tuple[list[DependencyItem], Counter]:
    """Parse items and their references with spaCy; compute features and gold structures.

    Parameters
    ----------
    items : sequence of CorpusItem
        Corpus items (references in ``compressions``).
    shell : DependencyModel
        Gives the feature settings (its weights are not used).
    tree : {"compression", "source"}
        Gold-tree choice (see :func:`gold_structure`).
    progress : callable, optional
        Called with 1 per item prepared.

    Returns
    -------
    items : list of DependencyItem
    origins : collections.Counter
        How many gold trees of each origin (``ORIGINS``).
    """
    sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
    refs = [c for it in items for c in it.compressions]
    parses = iter(parse_tokens(refs) if tree == "compression" else [None] * len(refs))
    out: list[DependencyItem] = []
    origins: Counter = Counter({o: 0 for o in ORIGINS})
    for it, s in zip(items, sentences, strict=True):
        golds = tuple(gold_structure(s, c, next(parses), tree) for c in it.compressions)
        origins.update(g.origin for g in golds)
        out.append(DependencyItem(it, s, shell.features(s), golds))
        if progress is not None:
            progress(1)
    return out, origins


@dataclass(frozen=True)
class LengthScores:
    """Scores of decoding at each reference's length.

    Attributes
    ----------
    bigram_f1, token_f1 : float
        Means over references, then sentences.
    exact : float
        Share of decodes with exactly the reference's length.
    certified : float
        Share of decodes proved optimal for that length.
    sentences : int
        Sentences scored (those with references).
    seconds_per_sentence : float
        Mean time of potentials + decoding (all of a sentence's references).
    """

    bigram_f1: float
    token_f1: float
    exact: float
    certified: float
    sentences: int
    seconds_per_sentence: float


def score_at_gold_length(weights: np.ndarray, items: Sequence[DependencyItem]) -> LengthScores:
    """Decode every item at each reference's length and score against that reference.

    Parameters
    ----------
    weights : numpy.ndarray
        Model weights.
    items : sequence of DependencyItem
        Prepared items; those without references are skipped.

    Returns
    -------
    LengthScores
    """
    big, tok, exact, certified, total, seconds = [], [], 0, 0, 0, 0.0
    for p in items:
        if not p.golds:
            continue
        start = time.perf_counter()
        A, S = p.features.potentials(weights)
        decoded: dict[int, LengthDecode] = {}
        for g in p.golds:
            if g.length not in decoded:
                decoded[g.length] = decode_at_length(A, S, g.length)
        seconds += time.perf_counter() - start
        b, t = [], []
        for g in p.golds:
            d = decoded[g.length]
            sys_toks = [w for w, k in zip(p.item.text, d.keep, strict=True) if k]
            b.append(bigram_f1(sys_toks, g.tokens))
            t.append(token_f1(sys_toks, g.tokens))
            exact += d.exact
            certified += d.certified
            total += 1
        big.append(float(np.mean(b)))
        tok.append(float(np.mean(t)))
    if not big:
        return LengthScores(float("nan"), float("nan"), float("nan"), float("nan"), 0, float("nan"))
    return LengthScores(float(np.mean(big)), float(np.mean(tok)), exact / total, certified / total, len(big),
                        seconds / len(big))


def calibrate_free_length(weights: np.ndarray, parts: Sequence[Sequence[DependencyItem]],
                          iterations: int = 25) -> float:
    """The multiplier ``lam*`` whose free-length outputs keep the references' share of tokens.

    The rate (mean over sentences of kept / n, then over ``parts``) is non-increasing in ``lam``; the
    target is the same mean over the references. Subtracting ``lam*`` from the ``keep_bias`` weight makes
    ``lam = 0`` behave like ``lam*``.
    """
    sets = [[(p.features.potentials(weights), p.item.n) for p in part if p.golds] for part in parts]
    targets = [np.mean([np.mean([g.length / p.item.n for g in p.golds]) for p in part if p.golds])
               for part in parts if any(p.golds for p in part)]
    sets = [s for s in sets if s]
    if not sets:
        return 0.0
    target = float(np.mean(targets))

    def rate(lam: float) -> float:
        return float(np.mean([np.mean([solve(A, S=S, lam=lam).length / n for (A, S), n in s]) for s in sets]))

    return bisect_rate(rate, target, increasing=False, iterations=iterations)


# --------------------------------------------------------------------------------------------------
# training


@dataclass(frozen=True)
class _Example:
    features: DependencyFeatures
    gold: GoldStructure


def train_dependency(train_files: Sequence[str], dev_files: Sequence[str], config: DependencyTrainingConfig,
                     log: Callable[[str], None] | None = None,
                     progress_factory: Callable[[int, str], Callable[[int], None]] | None = None,
                     ) -> tuple[DependencyModel, list[EpochReport]]:
    """Train a dependency model by the averaged structured perceptron with the exact parser in the loop.

    Parameters
    ----------
    train_files, dev_files : sequences of paths
        Corpora in the project JSONL format (``dev_files`` may be empty: the last epoch is kept).
    config : DependencyTrainingConfig
        Hyper-parameters.
    log : callable, optional
        Receives progress messages.
    progress_factory : callable, optional
        ``progress_factory(total, description)`` returns an update callback (e.g. a tqdm bar's).

    Returns
    -------
    model : DependencyModel
        The averaged weights of the best dev epoch (bigram F1 at gold length, mean over the dev files),
        free-length calibrated; ``meta`` records the data, gold-tree origins and per-epoch scores.
    reports : list of EpochReport
    """
    say = log or (lambda _msg: None)
    start = time.perf_counter()
    shell = DependencyModel(np.zeros(1), config.hash_bits, config.second_order, config.lexical)
    train_sets = read_corpora(train_files, config.limit)
    dev_sets = read_corpora(dev_files, config.dev_limit)
    total = sum(map(len, train_sets)) + sum(map(len, dev_sets))
    bar = progress_factory(total, "parsing") if progress_factory else None
    parsed, origins = prepare_items([it for s in train_sets for it in s], shell, config.gold_tree, bar)
    dev_parts = [prepare_items(s, shell, config.gold_tree, bar)[0] for s in dev_sets]
    examples = [_Example(p.features, g) for p in parsed for g in p.golds]
    prepared = time.perf_counter() - start
    say(f"{len(parsed)} training sentences, {len(examples)} examples, {sum(map(len, dev_parts))} dev "
        f"sentences (prepared in {prepared:.1f} s); gold trees: {dict(origins)}")

    decodes = {"exact": 0, "total": 0}

    def decode(ex: _Example, w: np.ndarray) -> np.ndarray:
        A, S = ex.features.potentials(w)
        if config.length_mode == "free":
            return solve(A, S=S).heads
        d = decode_at_length(A, S, ex.gold.length, engine=config.engine_in_loop)
        decodes["exact"] += d.exact
        decodes["total"] += 1
        return d.heads

    def mistaken(ex: _Example, heads: np.ndarray) -> bool:
        return not np.array_equal(heads, ex.gold.heads)

    def difference(ex: _Example, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gi, gv = ex.features.vector(ex.gold.heads)
        pi, pv = ex.features.vector(heads)
        return np.concatenate((gi, pi)), np.concatenate((gv, -pv))

    epoch_log: list[dict] = []

    def on_epoch(epoch: int, avg: np.ndarray) -> float | None:
        scores = [score_at_gold_length(avg, part) for part in dev_parts]
        mean = float(np.mean([s.bigram_f1 for s in scores])) if scores else None
        exact = decodes["exact"] / decodes["total"] if decodes["total"] else None
        epoch_log.append({"epoch": epoch, "dev_bigram_f1": [s.bigram_f1 for s in scores],
                          "dev_token_f1": [s.token_f1 for s in scores],
                          "dev_exact_length": [s.exact for s in scores],
                          "dev_certified": [s.certified for s in scores], "train_exact_length": exact,
                          "seconds": time.perf_counter() - start})
        decodes["exact"] = decodes["total"] = 0
        detail = ", ".join(f"{100 * s.bigram_f1:.2f}/{100 * s.token_f1:.2f} (exact {100 * s.exact:.0f}%, "
                           f"certified {100 * s.certified:.0f}%)" for s in scores)
        say(f"epoch {epoch}: dev bigram F1 at gold length (mean over the dev files) = "
            f"{'n/a' if mean is None else f'{100 * mean:.2f}'} [bigram/token per file: {detail}]"
            + ("" if exact is None else f"; exact-length decodes in training {100 * exact:.1f}%"))
        return mean

    bar = progress_factory(len(examples) * config.epochs, "training") if progress_factory else None
    weights, reports = averaged_perceptron(examples, 1 << config.hash_bits, decode, mistaken, difference,
                                           config.epochs, config.seed, on_epoch, bar)
    best = max((r for r in reports if r.dev_score is not None), key=lambda r: r.dev_score, default=None)
    weights = weights.copy()
    lam = 0.0
    if config.calibrate:
        lam = calibrate_free_length(weights, dev_parts if any(dev_parts) else [parsed])
        weights[keep_bias_index(config.hash_bits)] -= lam
        say(f"free-length calibration: keep bias {-lam:+.4f} (compression rate matches the references)")
    meta = {
        "trainer": "averaged structured perceptron (exact skip parser in the loop)",
        "train_files": [str(f).rsplit("/", 1)[-1] for f in train_files],
        "dev_files": [str(f).rsplit("/", 1)[-1] for f in dev_files],
        "limit": config.limit,
        "dev_limit": config.dev_limit,
        "epochs": config.epochs,
        "length_mode": config.length_mode,
        "gold_tree": config.gold_tree,
        "gold_tree_origins": dict(origins),
        "second_order": config.second_order,
        "seed": config.seed,
        "best_epoch": best.epoch if best else config.epochs,
        "dev_bigram_f1_gold_length": best.dev_score if best else None,
        "mistakes_per_epoch": [r.mistakes for r in reports],
        "epoch_log": epoch_log,
        "examples": len(examples),
        "length_bias": -lam,
        "training_seconds": time.perf_counter() - start,
    }
    return DependencyModel(weights, config.hash_bits, config.second_order, config.lexical, meta), reports
