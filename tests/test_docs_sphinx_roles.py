"""docs/hooks/sphinx_roles.py: the API reference shows Sphinx roles as links or code, never as text.

The griffe extension (docs/hooks/griffe_sphinx_roles.py) needs the docs tools and runs in `make docs`; the
conversion it applies and the check that fails the build on a leftover role are tested here.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


roles = _load("sphinx_roles")
KNOWN = {"dualdecomp.core.errors.InputError": "dualdecomp.core.errors.InputError",
         "decode": "dualdecomp.engine.decode.decode",
         "Compressor.compress_text": "dualdecomp.app.compressor.Compressor.compress_text"}


def _autoref(identifier: str, title: str) -> str:
    return f'<autoref identifier="{identifier}" optional>`{title}`</autoref>'


@pytest.mark.parametrize(("body", "expected"), [
    ("dualdecomp.x.y", ("dualdecomp.x.y", "dualdecomp.x.y", True)),
    ("~dualdecomp.x.y", ("dualdecomp.x.y", "y", True)),
    (".y", ("y", "y", True)),
    ("!dualdecomp.x", ("dualdecomp.x", "dualdecomp.x", False)),
    ("the decoder <dualdecomp.engine.decode.decode>",
     ("dualdecomp.engine.decode.decode", "the decoder", True)),
    ("~dualdecomp.core.component.\n    LengthComponent", ("dualdecomp.core.component.LengthComponent",
                                                        "LengthComponent", True)),
])
def test_parse_role_body(body, expected):
    assert roles.parse_role_body(body) == expected


def test_convert_links_known_targets_and_shows_unknown_ones_as_code():
    text = ("Raises :class:`~dualdecomp.core.errors.InputError`; see :func:`decode` and\n"
            ":meth:`Compressor.compress_text`, :mod:`dualdecomp.nowhere`, :py:data:`LIMIT`,\n"
            ":func:`!decode` and :math:`x^2`.")
    assert roles.convert(text, KNOWN.get) == (
        f"Raises {_autoref('dualdecomp.core.errors.InputError', 'InputError')}; see "
        f"{_autoref('dualdecomp.engine.decode.decode', 'decode')} and\n"
        f"{_autoref('dualdecomp.app.compressor.Compressor.compress_text', 'Compressor.compress_text')}, "
        "`dualdecomp.nowhere`, `LIMIT`,\n`decode` and `x^2`.")


def test_convert_leaves_plain_markdown_alone():
    text = "Use ``--length`` or `code`: a ratio. Times 10:30 and a URL http://x.org/a:b `c`."
    assert roles.convert(text, KNOWN.get) == text


def test_convert_passes_the_target_as_written_once():
    seen = []
    roles.convert(":func:`~a.b.c` :class:`T <p.Q>` :meth:`.m`", lambda t: seen.append(t))
    assert seen == ["a.b.c", "p.Q", "m"]


def _docstrings() -> list[tuple[str, str]]:
    found = []
    for folder in ("dualdecomp", "solvers", "models", "data"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc:
                        found.append((f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc))
    return found


def test_every_role_in_the_source_tree_is_converted():
    """Every role form the docstrings use is one convert() rewrites: none is left, linked or not."""
    docstrings = _docstrings()
    with_roles = [(where, doc) for where, doc in docstrings if roles.leftover_roles(doc)]
    assert len(with_roles) > 100  # the source tree does use roles: the check below checks something
    for resolver in (lambda target: None, lambda target: target):
        left = [(where, roles.leftover_roles(roles.convert(doc, resolver))) for where, doc in with_roles]
        assert [item for item in left if item[1]] == []


def test_convert_is_idempotent_on_the_source_tree():
    for _, doc in _docstrings()[:400]:
        once = roles.convert(doc, KNOWN.get)
        assert roles.convert(once, KNOWN.get) == once


def test_leftover_roles_finds_roles_in_html_and_markdown():
    assert roles.leftover_roles("<p>see :func:<code>x</code> and :py:class:<code>Y</code></p>") != []
    assert len(roles.leftover_roles("see :meth:`x` and :attr:`y`")) == 2
    assert roles.leftover_roles('<p>see <a href="#x"><code>x</code></a>: 10:30</p>') == []


def test_check_roles_hook_warns_for_each_leftover_role(caplog):
    hook = _load("check_roles")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/api.md"))
    html = "<p>an :class:<code>InputError</code> or :mod:<code>dualdecomp.x</code></p>"
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.check_roles"):
        assert hook.on_post_page(html, page=page, config=None) == html
    assert len([r for r in caplog.records if "Sphinx role" in r.getMessage()]) == 2
