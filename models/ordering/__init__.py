"""Syntax-based word ordering (Zhang & Clark 2015, dependency system): input, features, search, training."""
