"""Old module name of :mod:`dualdecomp.data.detokenise` (old spelling kept), only until
``dualdecomp/app/compressor.py`` imports the new name; not part of the documented API."""

from dualdecomp.data.detokenise import detokenise as detokenize  # old spelling kept

__all__ = ["detokenize"]  # old spelling kept
