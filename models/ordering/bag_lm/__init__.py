"""The bag LM search (beyond the paper): a bag of words ordered by n-gram LMs alone, left to right with a
beam over the bag's items; the estimation of its LMs and the choice of its beam on dev."""
