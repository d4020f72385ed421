"""Rule features of the T3 model (Cohn & Lapata 2009, §4 and Table 2), hashed with
``dualdecomp.core.hashing``.

For a rule ⟨X, Y⟩ → ⟨α, γ⟩ (binary unless stated):

* **type**: extracted from training / copy rule / deletion rule (one feature per kind);
* **root**: X, Y and X∧Y;
* **identity**: α, γ, the full rule, and whether α = γ (ignoring the deletion marks);
* **unlexicalised identity**: the same four on the unlexicalised trees (words removed);
* **rule count**: always 1;
* **word count** (real): terminals in γ, terminals in α; and, per application, the number of source
  tokens the rule deletes (computed on the source tree when the rule is applied, ``DROPPED``);
* **yield**: whether the terminal yields of α and γ are identical; each terminal in both; each terminal
  only in the source; the same three over the frontier non-terminals (variables and preterminals);
* **length** (real): difference of the frontier lengths of α and γ; and whether γ's frontier is shorter.

The n-gram (LM) feature of the paper is not a rule feature; the LM enters only in the approximate
T3 + LM beam search (``dualdecomp.solvers.transducer.lm_beam``).
"""

from __future__ import annotations

import numpy as np

from dualdecomp.core.hashing import atom, feature_index, named_features
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag, Rule, format_frag

__all__ = ["DROPPED", "TEMPLATES", "RuleFeaturiser", "rule_feature_strings"]

TEMPLATES = ("type", "root.x", "root.y", "root.xy", "id.src", "id.tgt", "id.rule", "id.same",
             "unlex.src", "unlex.tgt", "unlex.rule", "unlex.same", "count", "words.tgt", "words.src",
             "yield.same", "yield.both", "yield.src_only", "nt.same", "nt.both", "nt.src_only",
             "length.diff", "length.shorter", "dropped")
_T = {name: i for i, name in enumerate(TEMPLATES)}
DROPPED = "dropped"


def _frontier_nts(frag: Frag) -> list[tuple[str, bool]]:
    """Frontier non-terminals: variables and preterminals over words, with their kept flags."""
    out: list[tuple[str, bool]] = []

    def walk(f: Frag) -> None:
        if f.kind == VAR:
            out.append((f.label, f.kept))
        elif f.kind == NODE:
            if len(f.children) == 1 and f.children[0].kind == WORD:
                out.append((f.label, f.children[0].kept))
            else:
                for c in f.children:
                    walk(c)

    walk(frag)
    return out


def rule_feature_strings(rule: Rule) -> list[tuple[str, str, float]]:
    """The (template, value, weight) triples of a rule's features (before hashing).

    Returns
    -------
    list of (str, str, float)
    """
    src, tgt = rule.source, rule.target
    s_plain, t_plain = format_frag(src, marks=False), format_frag(tgt, marks=False)
    s_id, t_id = format_frag(src), format_frag(tgt)
    s_un, t_un = format_frag(src, lexical=False), format_frag(tgt, lexical=False)
    s_un_plain = format_frag(src, lexical=False, marks=False)
    feats: list[tuple[str, str, float]] = [("type", k, 1.0) for k in sorted(rule.kinds)]
    feats += [("root.x", rule.root, 1.0), ("root.y", rule.target_root, 1.0),
              ("root.xy", f"{rule.root}|{rule.target_root}", 1.0),
              ("id.src", s_id, 1.0), ("id.tgt", t_id, 1.0), ("id.rule", f"{s_id}=>{t_id}", 1.0),
              ("unlex.src", s_un, 1.0), ("unlex.tgt", t_un, 1.0), ("unlex.rule", f"{s_un}=>{t_un}", 1.0),
              ("count", "", 1.0)]
    if s_plain == t_plain:
        feats.append(("id.same", "", 1.0))
    if s_un_plain == t_un:
        feats.append(("unlex.same", "", 1.0))
    s_words = [f for f in src.frontier() if f.kind == WORD]
    t_words = [f.label for f in tgt.frontier() if f.kind == WORD]
    if t_words:
        feats.append(("words.tgt", "", float(len(t_words))))
    if s_words:
        feats.append(("words.src", "", float(len(s_words))))
    if [f.label for f in s_words] == t_words:
        feats.append(("yield.same", "", 1.0))
    for f in s_words:
        feats.append(("yield.both" if f.kept else "yield.src_only", f.label, 1.0))
    s_nts = _frontier_nts(src)
    t_nts = [lab for lab, _ in _frontier_nts(tgt)]
    if [lab for lab, _ in s_nts] == t_nts:
        feats.append(("nt.same", "", 1.0))
    for lab, kept in s_nts:
        feats.append(("nt.both" if kept else "nt.src_only", lab, 1.0))
    diff = len(src.frontier()) - len(tgt.frontier())
    if diff:
        feats.append(("length.diff", "", float(diff)))
    if diff > 0:
        feats.append(("length.shorter", "", 1.0))
    return feats


class RuleFeaturiser:
    """Hashed rule features, cached by rule key.

    Parameters
    ----------
    hash_bits : int
        log2 of the weight-vector size.

    Attributes
    ----------
    dropped_index : int
        Index of the per-application deleted-token count feature.
    """

    def __init__(self, hash_bits: int = 20) -> None:
        self.hash_bits = hash_bits
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.dropped_index = int(feature_index(_T[DROPPED], np.uint64(atom("")), 0, hash_bits))

    def __call__(self, rule: Rule) -> tuple[np.ndarray, np.ndarray]:
        """(indices int64, values float64) of a rule's features."""
        key = rule.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        idx, val = named_features(rule_feature_strings(rule), _T, self.hash_bits)
        self._cache[key] = (idx, val)
        return idx, val

    def score(self, weights: np.ndarray, rule: Rule, dropped: int) -> float:
        """w·φ(rule application)."""
        idx, val = self(rule)
        return float(weights[idx] @ val + weights[self.dropped_index] * dropped)
