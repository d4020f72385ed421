"""Sphinx cross-reference roles in docstrings, rewritten as mkdocs-autorefs links.

The docstrings are numpy style and name other objects with Sphinx roles (``:func:`x```, ``:class:`~x```,
``:meth:``, ``:mod:``, ``:data:``, ``:attr:``, ...), which Markdown shows as plain text. :func:`convert`
turns each role into an *optional* autorefs reference, ``<autoref identifier="PATH" optional>`x`</autoref>``:
a link where PATH is rendered somewhere on the site, inline code (never a broken-link warning) where it is
not. The griffe extension (``griffe_sphinx_roles.py``) calls it on every docstring as the API reference
loads; the MkDocs hook (``check_roles.py``) fails the build if a role is left in a built page.

Pure Python, no dependency: ``tests/test_docs_sphinx_roles.py`` tests it without the docs tools.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

# Roles of the Python domain, with or without the ``py:`` prefix: their target names a Python object.
PYTHON_ROLES = frozenset({"func", "class", "meth", "mod", "data", "attr", "exc", "obj", "const", "type"})

# ``:role:`body``` and ``:domain:role:`body```; the body may wrap onto the next docstring line.
ROLE_RE = re.compile(r"(?<![\w`]):(?:(?P<domain>[a-z]+):)?(?P<role>[a-z]+):`(?P<body>[^`]+)`")

# What a role left in a built HTML page looks like (Markdown turns its backticks into <code>).
LEFTOVER_RE = re.compile(r":(?:[a-z]+:)?(?:func|class|meth|mod|data|attr|exc|obj|const|type):(?:`|<code>)")

Resolver = Callable[[str], "str | None"]


def parse_role_body(body: str) -> tuple[str, str, bool]:
    """Split a role's body into its target, its displayed text and whether to link it.

    Parameters
    ----------
    body : str
        The text between the role's backticks: ``a.b.c``, ``~a.b.c`` (show ``c``), ``.c`` (a relative
        name), ``!a.b`` (no link) or ``title <a.b.c>``; line breaks inside are ignored.

    Returns
    -------
    tuple of (str, str, bool)
        The target (whitespace removed, no leading ``~``, ``!`` or ``.``), the text to show and whether
        Sphinx would link it.
    """
    body = " ".join(body.split())
    explicit = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", body)
    if explicit:
        title, target = explicit["title"], "".join(explicit["target"].split())
    else:
        title, target = None, "".join(body.split())
    link = not target.startswith("!")
    target = target.lstrip("!")
    short = target.startswith("~")
    target = target.lstrip("~").lstrip(".")
    if title is None:
        title = target.rsplit(".", 1)[-1] if short else target
    return target, title, link


def _code(text: str) -> str:
    # Markdown inline code; a text holding a backtick needs a longer fence.
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def convert(text: str, resolve: Resolver) -> str:
    """Rewrite every Sphinx role in a docstring as an optional autorefs reference, or as inline code.

    Parameters
    ----------
    text : str
        A docstring.
    resolve : callable
        ``resolve(target) -> identifier or None``: the full path under which the target is documented
        (the identifier the API reference registers), or None when it names nothing known.

    Returns
    -------
    str
        The docstring without roles: a Python-domain role whose target resolves becomes
        ``<autoref identifier="PATH" optional>`title`</autoref>`` (a link when PATH is rendered, inline
        code when it is not); any other role becomes ``` `title` ```.
    """

    def replace(match: re.Match[str]) -> str:
        domain, role = match["domain"], match["role"]
        target, title, link = parse_role_body(match["body"])
        python = role in PYTHON_ROLES and domain in (None, "py")
        identifier = resolve(target) if python and link and target else None
        if identifier is None:
            return _code(title)
        identifier = html.escape(identifier, quote=True)
        return f'<autoref identifier="{identifier}" optional>{_code(title)}</autoref>'

    return ROLE_RE.sub(replace, text)


def leftover_roles(page: str) -> list[str]:
    """The Sphinx roles still shown in a built HTML page (or in Markdown text), each with some context."""
    return [page[max(0, m.start() - 40):m.end() + 40] for m in LEFTOVER_RE.finditer(page)]
