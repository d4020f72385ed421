"""Word ordering, the second task (Zhang & Clark 2015, dependency system, and beyond it).

One folder per concern; each imports only the ones above it in this list:

- ``lm_term``: the KenLM term added to an ordering score (exact under concatenation);
- ``paper/``: the paper's model (weights, features, edges), its decoders (best-first search, the exact
  and tree beam DPs, the second stage), the error diagnosis and guided learning;
- ``lineariser/``: the head-domain lineariser (model, features, exact DP with the LM term, training,
  decoding of full trees);
- ``bag_lm/``: the bag LM search (n-gram LMs alone) and the estimation of its LMs;
- ``decoding/``: ``OrderingDecoder``, which holds the models of a model directory and picks among their
  decoders, its settings, loading, the lineariser as second stage and the choice of the LM weight.

The input and its reading are in ``dualdecomp.data.ordering``, the exact searches in
``dualdecomp.solvers.ordering``, the evaluation in ``dualdecomp.models.evaluation.ordering`` and the
command in ``dualdecomp.app.commands.order``.
"""
