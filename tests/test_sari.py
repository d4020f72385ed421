"""SARI (models/evaluation/sari.py): cases computed by hand from the definition, EASSE's published values,
and properties on random token sequences.

Notation of the hand computations, per n-gram order n: ADD (right, by the output, by the references)
counts distinct n-grams; KEEP and DELETE (right, by the output, by the references) sum over the input's
n-grams with ``#g(R')`` = the reference count averaged over the references. p = right / output,
r = right / references, 0 when the denominator is 0; F1 = 2pr / (p + r), 0 unless p, r > 0. Sentence
SARI averages F_add(n), F_keep(n) and P_del(n) over n = 1..4 and takes the mean of the three.
The whole module is new: every test here fails on the old code (there was no SARI), checked by running
this file against /tmp/baseline (ImportError at collection).
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.models.evaluation.sari import SariScore, sari_corpus, sari_sentence

TOL = 1e-12


def tokens(text: str) -> list[str]:
    return text.split()


def expect(score: SariScore, add: F, keep: F, delete: F) -> None:
    """``score`` has the parts add, keep, delete (fractions in [0, 1]) and SARI their mean, in percent."""
    assert score.add == pytest.approx(float(100 * add), abs=TOL)
    assert score.keep == pytest.approx(float(100 * keep), abs=TOL)
    assert score.delete == pytest.approx(float(100 * delete), abs=TOL)
    assert score.sari == pytest.approx(float(100 * (add + keep + delete) / 3), abs=TOL)


# --------------------------------------------------------------------------------------------------------
# hand-computed sentences


def test_identity_output_adds_and_deletes_nothing():
    # I = O = "a b c", R = ["a b"] (r = 1)
    # n=1: ADD nothing (0/0 -> p = r = 0) -> 0. KEEP a (1,1,1), b (1,1,1), c (right 0, out 1, ref 0)
    #      -> right 2, out 3, ref 2: p = 2/3, r = 1, F = 4/5. DELETE: out 0 -> p = 0.
    # n=2: KEEP ab (1,1,1), bc (0,1,0) -> p = 1/2, r = 1, F = 2/3. ADD 0, DELETE 0.
    # n=3: KEEP abc (0,1,0): p = 0, r = 0/0 = 0 -> F = 0. n=4: no n-grams -> 0.
    # keep = (4/5 + 2/3)/4 = 11/30; add = delete = 0; SARI = 11/90.
    score = sari_sentence(tokens("a b c"), tokens("a b c"), [tokens("a b")])
    expect(score, add=F(0), keep=F(11, 30), delete=F(0))
    # A reference that repeats an input word keeps it at most as often as the input has it:
    # I = O = "a b", R = ["a b a"]: n=1 KEEP a (right min(1, 1, 2) = 1, out 1, ref min(1, 2) = 1), b (1,1,1)
    # -> F = 1; n=2 KEEP ab (1,1,1) -> F = 1 (ADD: the reference's "b a" is not in O: p = 0/0 = 0 -> 0).
    # keep = 2/4 = 1/2, add = delete = 0.
    expect(sari_sentence(tokens("a b"), tokens("a b"), [tokens("a b a")]), add=F(0), keep=F(1, 2),
           delete=F(0))


def test_output_equal_to_the_only_reference():
    # I = "a b c", O = R = "a x c" (substitution b -> x), r = 1
    # n=1: ADD {x}: right 1, out 1, ref 1 -> F = 1. KEEP a (1,1,1), b (0,0,0), c (1,1,1) -> F = 1.
    #      DELETE b: right 1, out 1 -> p = 1.
    # n=2: ADD {ax, xc} both in R -> F = 1. KEEP ab, bc: all 0 -> F = 0. DELETE ab, bc: 2/2 -> p = 1.
    # n=3: ADD {axc} -> F = 1. KEEP abc 0 -> F = 0. DELETE abc 1/1 -> p = 1.
    # n=4: nothing -> 0, 0, 0.
    # add = 3/4, keep = 1/4, delete = 3/4; SARI = 7/12 (not 1: a 3-word sentence has no 4-gram).
    score = sari_sentence(tokens("a b c"), tokens("a x c"), [tokens("a x c")])
    expect(score, add=F(3, 4), keep=F(1, 4), delete=F(3, 4))


def test_pure_deletion_that_is_right():
    # I = "a b c d", O = "a b d" (deletes c), R = ["a b d", "b d"], r = 2
    # n=1: #g(R'): a 1/2, b 1, c 0, d 1. ADD: none either side -> 0.
    #      KEEP a (right 1/2, out 1, ref 1/2), b (1,1,1), c (0,0,0), d (1,1,1)
    #      -> right 5/2, out 3, ref 5/2: p = 5/6, r = 1, F = 10/11.
    #      DELETE a (0, 0, 1/2), c (1, 1, 1) -> right 1, out 1: p = 1.
    # n=2: I {ab, bc, cd}, O {ab, bd}, #g(R'): ab 1/2, bd 1.
    #      ADD {bd} in R: right 1, out 1, ref 1 -> F = 1.
    #      KEEP ab (1/2, 1, 1/2), bc (0,0,0), cd (0,0,0) -> p = 1/2, r = 1, F = 2/3.
    #      DELETE ab (0, 0, 1/2), bc (1,1,1), cd (1,1,1) -> p = 2/2 = 1.
    # n=3: I {abc, bcd}, O {abd}, R' abd 1/2. ADD {abd}: 1/1, ref 1 -> F = 1. KEEP 0 -> 0.
    #      DELETE abc (1,1,1), bcd (1,1,1) -> p = 1.
    # n=4: I {abcd}, O and R none. ADD 0, KEEP 0, DELETE abcd (1,1,1) -> p = 1.
    # add = 1/2, keep = (10/11 + 2/3)/4 = 13/33, delete = 1; SARI = 125/198.
    score = sari_sentence(tokens("a b c d"), tokens("a b d"), [tokens("a b d"), tokens("b d")])
    expect(score, add=F(1, 2), keep=F(13, 33), delete=F(1))
    assert score.sari == pytest.approx(100 * 125 / 198, abs=TOL)


def test_wrong_deletion_scores_lower():
    # I = "a b c d", O = "a c d" (deletes b, which both references keep), R = ["a b d", "b d"], r = 2
    # n=1: #g(R'): a 1/2, b 1, c 0, d 1. ADD 0.
    #      KEEP a (1/2, 1, 1/2), b (0, 0, 1), c (0, 1, 0), d (1, 1, 1) -> right 3/2, out 3, ref 5/2:
    #      p = 1/2, r = 3/5, F = 6/11.
    #      DELETE b (right 0, out 1, ref 0), a (0, 0, 1/2), c (0, 0, 1) -> right 0, out 1: p = 0.
    # n=2: I {ab, bc, cd}, O {ac, cd}, R' ab 1/2, bd 1.
    #      ADD {ac} not in R: p = 0 -> F = 0. KEEP ab (0,0,1/2), bc (0,0,0), cd (0,1,0): right 0 -> F = 0.
    #      DELETE ab (1/2, 1, 1/2), bc (1, 1, 1), cd (0, 0, 1) -> right 3/2, out 2: p = 3/4.
    # n=3: O {acd} not in R -> ADD 0. KEEP 0. DELETE abc (1,1,1), bcd (1,1,1) -> p = 1.
    # n=4: DELETE abcd (1,1,1) -> p = 1; ADD 0, KEEP 0.
    # add = 0, keep = (6/11)/4 = 3/22, delete = (0 + 3/4 + 1 + 1)/4 = 11/16; SARI = 145/528.
    score = sari_sentence(tokens("a b c d"), tokens("a c d"), [tokens("a b d"), tokens("b d")])
    expect(score, add=F(0), keep=F(3, 22), delete=F(11, 16))
    right = sari_sentence(tokens("a b c d"), tokens("a b d"), [tokens("a b d"), tokens("b d")])
    assert score.sari < right.sari and score.delete < right.delete


def test_addition_a_reference_has_and_one_none_has():
    # I = "a b", O = "a b x y", R = ["a b x"], r = 1: x is in the reference, y in none.
    # n=1: ADD {x, y}: right 1 (x), out 2, ref 1 -> p = 1/2, r = 1, F = 2/3. KEEP a, b (1,1,1) -> F = 1.
    #      DELETE: out 0 -> 0.
    # n=2: ADD {bx, xy}: right 1 (bx), out 2, ref {bx} 1 -> F = 2/3. KEEP ab (1,1,1) -> 1. DELETE 0.
    # n=3: I has none. ADD {abx, bxy}: right 1, out 2, ref {abx} 1 -> F = 2/3. KEEP 0, DELETE 0.
    # n=4: ADD {abxy}: right 0, out 1 -> p = 0 -> F = 0 (ref 0).
    # add = (3 * 2/3)/4 = 1/2, keep = 1/2, delete = 0; SARI = 1/3.
    score = sari_sentence(tokens("a b"), tokens("a b x y"), [tokens("a b x")])
    expect(score, add=F(1, 2), keep=F(1, 2), delete=F(0))
    # without the unmatched y: ADD n=1 {x} 1/1, n=2 {bx}, n=3 {abx} -> F = 1 each, n=4 none -> add = 3/4;
    # keep = 1/2, delete = 0; SARI = 5/12.
    expect(sari_sentence(tokens("a b"), tokens("a b x"), [tokens("a b x")]),
           add=F(3, 4), keep=F(1, 2), delete=F(0))


def test_reference_weights_decide_how_right_a_deletion_is():
    # I = "a b c", O = "a b" (deletes c); r = 3.
    # One of three references deletes c: R = ["a b", "a b c", "a b c"]; #c(R') = 2/3.
    # n=1: KEEP a, b (1,1,1), c (right 0, out 0, ref 2/3) -> right 2, out 2, ref 8/3: p = 1, r = 3/4,
    #      F = 6/7. DELETE c: right min(1, 1 - 2/3) = 1/3, out 1 -> p = 1/3. ADD 0.
    # n=2: #g(R'): ab 1, bc 2/3. KEEP ab (1,1,1), bc (0,0,2/3) -> r = 3/5, F = 3/4. DELETE bc -> p = 1/3.
    # n=3: abc R' 2/3. KEEP: out 0 -> 0. DELETE abc: 1/3 / 1 -> p = 1/3. n=4: 0.
    # add = 0, keep = (6/7 + 3/4)/4 = 45/112, delete = 3 * (1/3) / 4 = 1/4; SARI = 73/336.
    one = sari_sentence(tokens("a b c"), tokens("a b"), [tokens("a b"), tokens("a b c"), tokens("a b c")])
    expect(one, add=F(0), keep=F(45, 112), delete=F(1, 4))
    # Two of three delete c: R = ["a b", "a b", "a b c"]; #c(R') = 1/3.
    # n=1: KEEP ref 1 + 1 + 1/3 = 7/3 -> r = 6/7, F = 12/13. DELETE c: right 2/3, out 1 -> p = 2/3.
    # n=2: KEEP ref 1 + 1/3 -> r = 3/4, F = 6/7. DELETE bc -> 2/3. n=3: KEEP 0, DELETE abc -> 2/3. n=4: 0.
    # keep = (12/13 + 6/7)/4 = 81/182, delete = 3 * (2/3) / 4 = 1/2; SARI = 86/273.
    two = sari_sentence(tokens("a b c"), tokens("a b"), [tokens("a b"), tokens("a b"), tokens("a b c")])
    expect(two, add=F(0), keep=F(81, 182), delete=F(1, 2))
    assert two.sari == pytest.approx(100 * 86 / 273, abs=TOL)


def test_repeated_ngram_deletion_is_the_smaller_of_the_two_deletions():
    # I = "a a b", O = "a b" (one "a" deleted), R = ["a b"] (deletes one "a" too), r = 1
    # n=1: a: #(I) 2, #(O) 1, #(R') 1 -> KEEP (1, 1, 1), DELETE out 2 - 1 = 1, ref 2 - 1 = 1, right 1;
    #      b: KEEP (1,1,1), DELETE 0. KEEP F = 1, DELETE p = 1. ADD none -> 0.
    #      (Xu's SARI.py counts r(#I - #O) - r #R' = 0 deletions right here, p = 0.)
    # n=2: I {aa, ab}, O = R = {ab}: KEEP ab (1,1,1) -> F = 1; DELETE aa (1,1,1) -> p = 1.
    # n=3: DELETE aab (1,1,1) -> p = 1; KEEP and ADD 0. n=4: 0.
    # add = 0, keep = 2/4 = 1/2, delete = 3/4; SARI = 5/12.
    expect(sari_sentence(tokens("a a b"), tokens("a b"), [tokens("a b")]), add=F(0), keep=F(1, 2),
           delete=F(3, 4))


def test_keep_recall_is_a_ratio_of_sums():
    # cocoxu/simplification issue #6: I = "a b", O = "b", R = ["a b", "a"], r = 2; #g(R'): a 1, b 1/2.
    # n=1: KEEP a (right 0, out 0, ref 1), b (1/2, 1, 1/2) -> p = 1/2, r = (1/2) / (3/2) = 1/3
    #      (SARI.py: 1/2), F = 2/5. DELETE a (0, 1, 0), b (0, 0, 1/2) -> p = 0. ADD none -> 0.
    # n=2: ab: R' 1/2. KEEP: out 0 -> 0. DELETE ab (1/2, 1, 1/2) -> p = 1/2. n=3, 4: 0.
    # add = 0, keep = (2/5)/4 = 1/10, delete = (1/2)/4 = 1/8; SARI = 3/40.
    expect(sari_sentence(tokens("a b"), tokens("b"), [tokens("a b"), tokens("a")]), add=F(0),
           keep=F(1, 10), delete=F(1, 8))


# Five words, orders 1..4 all present: I = "a b c d e", O = "a b x d e" (c -> x),
# R = ["a b x d e", "b c d e"] (the second drops a), r = 2.
FIVE = (tokens("a b c d e"), tokens("a b x d e"), [tokens("a b x d e"), tokens("b c d e")])
# n=1: #g(R'): a 1/2, b 1, c 1/2, d 1, e 1, x 1/2.
#   ADD {x} in R: right 1, out 1, ref {x} 1 -> F = 1.
#   KEEP a (1/2, 1, 1/2), b (1,1,1), c (0, 0, 1/2), d (1,1,1), e (1,1,1) -> right 7/2, out 4, ref 4:
#   p = r = 7/8, F = 7/8.
#   DELETE a (0, 0, 1/2), c (1/2, 1, 1/2) -> right 1/2, out 1, ref 1: p = 1/2.
# n=2: I {ab, bc, cd, de}, O {ab, bx, xd, de}; R' ab, bx, xd, bc, cd 1/2, de 1.
#   ADD {bx, xd} both in R -> 2/2, ref {bx, xd} 2 -> F = 1.
#   KEEP ab (1/2, 1, 1/2), bc (0, 0, 1/2), cd (0, 0, 1/2), de (1,1,1) -> right 3/2, out 2, ref 5/2:
#   p = 3/4, r = 3/5, F = 2/3.
#   DELETE ab (0, 0, 1/2), bc (1/2, 1, 1/2), cd (1/2, 1, 1/2) -> right 1, out 2, ref 3/2: p = 1/2.
# n=3: I {abc, bcd, cde}, O {abx, bxd, xde}; R' abx, bxd, xde, bcd, cde 1/2.
#   ADD 3 of 3 in R, ref 3 -> F = 1. KEEP: out 0 -> F = 0 (p = 0; ref 1: r = 0).
#   DELETE abc (1, 1, 1), bcd (1/2, 1, 1/2), cde (1/2, 1, 1/2) -> right 2, out 3, ref 2: p = 2/3.
# n=4: I {abcd, bcde}, O {abxd, bxde}; R' abxd, bxde, bcde 1/2.
#   ADD 2 of 2, ref 2 -> F = 1. KEEP 0.
#   DELETE abcd (1, 1, 1), bcde (1/2, 1, 1/2) -> right 3/2, out 2, ref 3/2: p = 3/4.
# add = 1, keep = (7/8 + 2/3)/4 = 37/96, delete = (1/2 + 1/2 + 2/3 + 3/4)/4 = 29/48; SARI = 191/288.


def test_five_word_sentence_uses_every_order_up_to_four():
    score = sari_sentence(*FIVE)
    expect(score, add=F(1), keep=F(37, 96), delete=F(29, 48))
    assert score.sari == pytest.approx(100 * 191 / 288, abs=TOL)


def test_paper_averaging_takes_f1_of_the_mean_precision_and_recall():
    # FIVE with average="paper": P_add = R_add = 1 -> F_add = 1.
    # P_keep = (7/8 + 3/4 + 0 + 0)/4 = 13/32, R_keep = (7/8 + 3/5 + 0 + 0)/4 = 59/160,
    # F_keep = 2 (13/32)(59/160) / (13/32 + 59/160) = 767/1984. P_del = 29/48 as before.
    expect(sari_sentence(*FIVE, average="paper"), add=F(1), keep=F(767, 1984), delete=F(29, 48))


def test_deletion_by_f1_on_request():
    # test_pure_deletion_that_is_right with deletion="f1": DELETE recall n=1: 1 / (1/2 + 1) = 2/3, F = 4/5;
    # n=2: right 2, ref 1/2 + 1 + 1 = 5/2 -> r = 4/5, F = 8/9; n=3: 2/2 -> F = 1; n=4: 1/1 -> F = 1.
    # delete = (4/5 + 8/9 + 1 + 1)/4 = 83/90.
    score = sari_sentence(tokens("a b c d"), tokens("a b d"), [tokens("a b d"), tokens("b d")], deletion="f1")
    expect(score, add=F(1, 2), keep=F(13, 33), delete=F(83, 90))


# --------------------------------------------------------------------------------------------------------
# corpus


def test_pooled_corpus_sums_counts_and_differs_from_the_mean():
    # S1: I = "a b", O = "a", R = ["a"]. n=1: KEEP a (1,1,1), b (0,0,0); DELETE b (1,1,1). n=2: KEEP ab 0;
    #     DELETE ab (1,1,1). ADD nothing. Sentence SARI: keep (1 + 0)/4 = 1/4, delete (1 + 1)/4 = 1/2,
    #     add 0 -> 1/4.
    # S2: I = O = R = "a b". n=1: KEEP (2,2,2); n=2: KEEP ab (1,1,1); nothing deleted or added.
    #     Sentence SARI: keep (1 + 1)/4 = 1/2, delete 0, add 0 -> 1/6.
    # Pooled: n=1 KEEP (3,3,3) -> 1, DELETE (1,1,1) -> p = r = 1; n=2 KEEP (1,1,1) -> 1, DELETE (1,1,1)
    #     -> 1. keep = 1/2, delete (F1 by default, or precision: both 1 per order) = 1/2, add 0 -> 1/3.
    # Mean: keep (1/4 + 1/2)/2 = 3/8, delete (1/2 + 0)/2 = 1/4, add 0, SARI (1/4 + 1/6)/2 = 5/24.
    corpus = ([tokens("a b"), tokens("a b")], [tokens("a"), tokens("a b")], [[tokens("a")], [tokens("a b")]])
    expect(sari_corpus(*corpus), add=F(0), keep=F(1, 2), delete=F(1, 2))
    expect(sari_corpus(*corpus, deletion="precision"), add=F(0), keep=F(1, 2), delete=F(1, 2))
    expect(sari_corpus(*corpus, method="mean"), add=F(0), keep=F(3, 8), delete=F(1, 4))


def test_pooled_corpus_scores_deletion_by_f1_by_default():
    # One sentence, test_pure_deletion_that_is_right: pooled with the default F1 deletion gives the
    # sentence score with deletion="f1"; with deletion="precision" the sentence score itself.
    source, output, refs = tokens("a b c d"), tokens("a b d"), [tokens("a b d"), tokens("b d")]
    assert sari_corpus([source], [output], [refs]) == sari_sentence(source, output, refs, deletion="f1")
    by_precision = sari_corpus([source], [output], [refs], deletion="precision")
    assert by_precision == sari_sentence(source, output, refs)
    assert sari_corpus([source], [output], [refs], method="mean") == sari_sentence(source, output, refs)


# --------------------------------------------------------------------------------------------------------
# EASSE's published values (feralvam/easse README.md, section "Python"): its defaults lowercase and
# tokenise with sacrebleu's 13a; sentence_sari (in the README while EASSE had it) scores deletion by
# precision, corpus_sari pools the counts and scores deletion by F1.

EASSE_SOURCES = ["About 95 species are currently accepted.", "The cat perched on the mat."]
EASSE_OUTPUTS = ["About 95 you now get in.", "Cat on mat."]
EASSE_REFERENCES = [["About 95 species are currently known.", "About 95 species are now accepted.",
                     "95 species are now accepted."],
                    ["The cat sat on the mat.", "The cat is on the mat.", "The cat sat."]]


def test_easse_sentence_sari_readme_value():
    score = sari_sentence(EASSE_SOURCES[0], EASSE_OUTPUTS[0], EASSE_REFERENCES[0], tokenizer="13a")
    assert score.sari == pytest.approx(26.953601953601954, abs=1e-9)


def test_easse_corpus_sari_readme_value():
    score = sari_corpus(EASSE_SOURCES, EASSE_OUTPUTS, EASSE_REFERENCES, tokenizer="13a")
    assert score.sari == pytest.approx(33.17472563619544, abs=1e-9)


# --------------------------------------------------------------------------------------------------------
# tokenisation and errors


def test_strings_split_on_whitespace_and_lowercased_by_default():
    as_tokens = sari_sentence(tokens("a b c d e"), tokens("a b x d e"), [tokens("a b x d e")])
    assert sari_sentence("A  b c\td E", "a B x d e", ["a b X d e"]) == as_tokens
    # case kept: "A" is an addition no reference has, and "a" a deletion the reference does not make
    assert sari_sentence("a b c d e", "A b x d e", ["a b x d e"], lowercase=False).sari < as_tokens.sari


def test_13a_splits_punctuation_from_words():
    # 13a: "mat." -> "mat ."; whitespace keeps "mat." as one token, so nothing is kept of "mat".
    assert sari_sentence("the mat.", "the mat .", ["the mat ."], tokenizer="13a") == \
        sari_sentence(tokens("the mat ."), tokens("the mat ."), [tokens("the mat .")])
    assert sari_sentence("the mat.", "the mat .", ["the mat ."]) != \
        sari_sentence("the mat.", "the mat .", ["the mat ."], tokenizer="13a")


def test_short_and_empty_sentences_score_without_error():
    # I = "a", O = "" , R = [""]: n=1 DELETE a (1,1,1) -> p = 1; everything else 0/0 -> 0.
    # delete = 1/4, add = keep = 0.
    expect(sari_sentence(["a"], [], [[]]), add=F(0), keep=F(0), delete=F(1, 4))
    expect(sari_sentence("", "", [""]), add=F(0), keep=F(0), delete=F(0))


@pytest.mark.parametrize("call", [
    lambda: sari_sentence("a b", "a", []),
    lambda: sari_sentence("a b", "a", "a"),
    lambda: sari_sentence("a b", ["a", 1], ["a"]),
    lambda: sari_sentence("a b", "a", ["a"], tokenizer="moses"),
    lambda: sari_sentence("a b", "a", ["a"], deletion="recall"),
    lambda: sari_sentence("a b", "a", ["a"], average="micro"),
    lambda: sari_corpus([], [], []),
    lambda: sari_corpus(["a b"], ["a", "b"], [["a"]]),
    lambda: sari_corpus(["a b"], ["a"], [["a"]], method="median"),
])
def test_bad_input_is_an_input_error(call):
    with pytest.raises(InputError):
        call()


# --------------------------------------------------------------------------------------------------------
# properties

words = st.lists(st.sampled_from("abcd"), max_size=7)


@settings(max_examples=200, deadline=None)
@given(source=words, output=words, references=st.lists(words, min_size=1, max_size=4))
def test_properties_of_sentence_sari(source, output, references):
    score = sari_sentence(source, output, references)
    for value in (score.add, score.keep, score.delete, score.sari):
        assert 0.0 <= value <= 100.0
    assert score.sari == pytest.approx((score.add + score.keep + score.delete) / 3, abs=TOL)
    for order in itertools.islice(itertools.permutations(references), 6):
        assert sari_sentence(source, output, list(order)) == score
    # #g(R') is a mean over the references: repeating every reference changes nothing
    assert sari_sentence(source, output, references * 2) == score
    copy = sari_sentence(source, source, references)
    assert copy.add == 0.0 and copy.delete == 0.0


@settings(max_examples=100, deadline=None)
@given(corpus=st.lists(st.tuples(words, words, st.lists(words, min_size=1, max_size=3)), min_size=1,
                       max_size=4))
def test_properties_of_corpus_sari(corpus):
    sources, outputs, refs = ([c[i] for c in corpus] for i in range(3))
    for method in ("pooled", "mean"):
        score = sari_corpus(sources, outputs, refs, method=method)
        for value in (score.add, score.keep, score.delete, score.sari):
            assert 0.0 <= value <= 100.0
        assert score.sari == pytest.approx((score.add + score.keep + score.delete) / 3, abs=TOL)
        assert sari_corpus(sources, outputs, [r[::-1] for r in refs], method=method) == score
    sentences = [sari_sentence(*c) for c in corpus]
    mean = sari_corpus(sources, outputs, refs, method="mean")
    assert mean.sari == pytest.approx(sum(s.sari for s in sentences) / len(sentences), abs=TOL)
