"""agentic-codemod: change many repositories at once with an agent in the loop.

The public surface is deliberately small; everything else is internal.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
