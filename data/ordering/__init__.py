"""Word ordering's data: the input (a bag of words with optional constraints) and gold sentences, their
reading from CoNLL-U and JSONL, the base NPs of a UD tree as ordered units, and the output record every
decoder returns."""
