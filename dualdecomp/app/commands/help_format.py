"""The help layout of the subcommands: descriptions written as paragraphs, filled to the terminal's width.

argparse's default formatter joins a whole description into one paragraph; ``RawDescriptionHelpFormatter``
keeps the source's line breaks, so a description wrapped at 105 columns overflows a 100-column terminal.
:class:`ParagraphHelpFormatter` keeps the paragraphs (blank lines) and list items (lines starting with
``* ``) of a description or epilog and fills each to argparse's width (the terminal's, ``COLUMNS``).
"""

from __future__ import annotations

import argparse
import re
import textwrap

__all__ = ["ParagraphHelpFormatter"]

_ITEM = re.compile(r"^\s*\* ")


class ParagraphHelpFormatter(argparse.HelpFormatter):
    """An :class:`argparse.HelpFormatter` for descriptions written as paragraphs.

    Paragraphs are separated by blank lines; inside one, a line starting with ``* `` starts a list item
    (filled with a hanging indent); every other line break is a space. Option help texts are filled as
    argparse fills them.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
            blocks: list[str] = []
            for line in paragraph.splitlines():
                if _ITEM.match(line) or not blocks:
                    blocks.append(line.strip())
                else:
                    blocks[-1] += " " + line.strip()
            for block in blocks:
                hanging = indent + ("  " if block.startswith("* ") else "")
                out.append(textwrap.fill(block, width, initial_indent=indent, subsequent_indent=hanging,
                                         break_long_words=False, break_on_hyphens=False))
            out.append("")
        return "\n".join(out).rstrip("\n")
