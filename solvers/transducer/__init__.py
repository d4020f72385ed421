"""The STSG tree transducer (Cohn & Lapata): grammar, exact chart and component (``Transducer``)."""

from dualdecomp.solvers.transducer.coverage import coverage_rules
from dualdecomp.solvers.transducer.frag_codec import (
    FragEncoder,
    decode_frag,
    decode_strings,
    key_hash,
    production_index,
)
from dualdecomp.solvers.transducer.grammar import (
    NODE,
    VAR,
    WORD,
    Frag,
    Grammar,
    GrammarConfig,
    Rule,
    format_frag,
    load_grammar,
    save_grammar,
)
from dualdecomp.solvers.transducer.lm_beam import beam_search
from dualdecomp.solvers.transducer.rule_table import RuleTable
from dualdecomp.solvers.transducer.solver import (
    Derivation,
    Hypergraph,
    Transducer,
    build_hypergraph,
    match_frag,
)

__all__ = ["Derivation", "Frag", "FragEncoder", "Grammar", "GrammarConfig", "Hypergraph", "NODE", "Rule",
           "RuleTable", "Transducer", "VAR", "WORD", "beam_search", "build_hypergraph", "coverage_rules",
           "decode_frag", "decode_strings", "format_frag", "key_hash", "load_grammar", "match_frag",
           "production_index", "save_grammar"]
