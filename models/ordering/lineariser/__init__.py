"""The head-domain lineariser (beyond the paper): a second ordering model whose score is a sum over head
domains, its features, its exact DP with the LM term, its training (averaged perceptron) and its use as
the decoder of full trees."""
