"""MkDocs hook: a built page that still shows a Sphinx role (``:func:`x```) as text fails the build.

The griffe extension ``griffe_sphinx_roles.py`` rewrites the roles of every docstring; this hook checks
the result in the HTML of every page, so a role form it misses (or a role typed into a Markdown page) is a
warning, which ``mkdocs build --strict`` (``make docs``) turns into a failure.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sphinx_roles", Path(__file__).with_name("sphinx_roles.py"))
sphinx_roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sphinx_roles)

log = logging.getLogger("mkdocs.hooks.check_roles")


def on_post_page(output: str, page, config) -> str:
    """Warn about each Sphinx role left in the page's HTML; return the HTML unchanged."""
    for context in sphinx_roles.leftover_roles(output):
        log.warning("%s shows a Sphinx role as text: ...%s...", page.file.src_uri, " ".join(context.split()))
    return output
