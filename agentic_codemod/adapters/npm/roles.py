"""What each npm declaration is for, by the package.json field that holds it.

    role(file, section) -> Role

    dependencies           -> runtime
    peerDependencies       -> runtime   (what the host must provide; the bump widens or moves it too)
    optionalDependencies   -> extra     (installed when it can be; failure to install is not fatal)
    devDependencies        -> dev       (test runners and tools; npm has no separate test field)
    overrides              -> constraint (forces a version everywhere in the tree: edited only when the
                                          task names the file in sdk.also_bump)
    package-lock.json / npm-shrinkwrap.json entries -> lock (refreshed by npm, never edited)

The section (the field name) is kept on every Dependency, so a reader sees peer and optional apart.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["runtime", "extra", "dev", "constraint", "lock"]  # a subset of Dependency.role

ROLES: dict[str, Role] = {
    "dependencies": "runtime",
    "peerDependencies": "runtime",
    "optionalDependencies": "extra",
    "devDependencies": "dev",
    "overrides": "constraint",
    "lock": "lock",
}


def role(section: str) -> Role:
    return ROLES[section]
