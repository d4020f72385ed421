"""The paper's model (Zhang & Clark 2015): the scaled linear model over dependency edges, its features
(Python templates and their numba kernel), best-first search, the exact and tree beam DPs of full trees,
the second stage that completes and re-orders a best-first output, the search-or-model-error diagnosis,
and guided learning (one process, or parameter mixing on Dask)."""
