"""hatch.toml: Hatch's own configuration file, read and rewritten as pyproject.toml's [tool.hatch] is.

    [envs.<name>] dependencies, extra-dependencies      PEP 508 requirement strings  (pep735)

The same tomlkit edit in place as pyproject.py (every other byte kept), over the tables hatch.toml
declares in. Sections read `envs.<name>.dependencies`; roles.py gives them the role of the env's name, as
for [tool.hatch.envs.<name>].
"""

from __future__ import annotations

from tomlkit.toml_document import TOMLDocument

from agentic_codemod.adapters.python import pyproject
from agentic_codemod.adapters.python.pep508 import Bump, Declaration


def find(content: str, canonical: str) -> list[Declaration]:
    return pyproject.find(content, canonical, _slots)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pyproject.rewrite(content, canonical, bump, _slots)


def _slots(doc: TOMLDocument, canonical: str) -> list[pyproject._Slot]:
    return [
        slot
        for where, array in pyproject.hatch_env_arrays(doc, "")
        for slot in pyproject.requirement_slots(array, canonical, "pep735", where)
    ]
