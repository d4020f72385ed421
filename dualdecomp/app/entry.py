"""The ``dualdecomp`` console script: nothing is imported before the Ctrl-C guard is in place."""

import sys


def main() -> None:
    """Run the CLI (:func:`dualdecomp.app.cli.main`); a Ctrl-C at any time, also while the CLI's modules
    are being imported, exits with 130 and one line on stderr, never a traceback."""
    try:
        # lazy: imported inside the guard, so a Ctrl-C during the imports is handled too
        from dualdecomp.app.cli import main as run

        code = run()
    except KeyboardInterrupt:
        print("dualdecomp: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
