"""Token normalisation of the Google compression training data, shared by every model that reads it.

The Google corpus (Filippova & Altun 2013) is lowercased and every token containing a digit is written
``##``. The LM, the bigram and dependency features use both rules (:func:`normalise_token`); the neural
scorer's tokenizer lowercases on its own, so it takes only the digit rule (:func:`mask_digits`).
"""

from __future__ import annotations

DIGIT_TOKEN = "##"
"""What every token containing a digit becomes."""


def mask_digits(token: str) -> str:
    """``##`` if the token contains a (Unicode) digit, else the token unchanged.

    Examples
    --------
    >>> mask_digits("1,500"), mask_digits("G8"), mask_digits("Obama")
    ('##', '##', 'Obama')
    """
    return DIGIT_TOKEN if any(ch.isdigit() for ch in token) else token


def normalise_token(token: str) -> str:
    """Normalise one token like the Google training data: lowercase; a token with a digit becomes ``##``.

    Parameters
    ----------
    token : str
        A token.

    Returns
    -------
    str
        ``"##"`` if ``token`` contains a (Unicode) digit, else ``token.lower()``.

    Examples
    --------
    >>> normalise_token("Obama"), normalise_token("1,500"), normalise_token("G8")
    ('obama', '##', '##')
    """
    masked = mask_digits(token)
    return masked if masked == DIGIT_TOKEN else token.lower()
