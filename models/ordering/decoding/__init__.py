"""Decoding word ordering: the decoder that holds the models of a model directory and picks among their
decoders."""
