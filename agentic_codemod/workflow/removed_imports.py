"""The backstop after the codemod: code that still imports an SDK module the target version no longer ships.

    items(state) -> [str]          one human's item per import of such a module in the candidate ("src/a.py:3
                                   imports acme.errors, which acme-sdk 2.0.0 no longer ships"), and per
                                   code file naming the SDK's package that could not be read; [] where the
                                   module lists of both versions are not at hand

The codemod's rules match the import forms their authors wrote. Others slip past them: black's
parenthesized `from acme.utils import (\\n    paginate,\\n)`, aliases, star imports, `from acme import
errors`, `importlib.import_module("acme.errors")`, and files no rule scans (stubs, scripts, notebooks).
When the repository's tests never import such a file, both test runs pass and the run would claim
success on code that fails at its first import. So, whatever the rules and the brain did, the candidate
is read for imports of modules the installed FROM version ships and the installed target does not (the
distribution's own file lists, compared; a module no version shipped is not the migration's concern),
and each one is a human's item of the plan, added at review (steps.review), so the reviewer and the
merge request read it and the run cannot succeed (outcome._unaddressed_human_items: exit 3).

Where the FROM version's list comes from: the baseline environment (paths.env_dir) where the bump
installed into its copy (paths.env_after, baseline_run.py); where the bump installed into the baseline
environment itself (its tests ran first), the adapter reads it from the local wheel folders.

The adapter reads the lists and the imports (Adapter.removed_imports; Python: RECORD files and `ast`).
npm has none: a package's files are no list of modules a version removes (its `exports` map, deep
imports of `dist/` paths), so for npm `items` is [].
"""

from __future__ import annotations

from agentic_codemod.adapters import get_adapter
from agentic_codemod.workflow.environments import sdk_key
from agentic_codemod.workflow.state import RunState


def items(state: RunState) -> list[str]:
    sdk, env = state.task.sdk, state.env
    read = get_adapter(sdk.ecosystem).removed_imports
    if read is None or env is None or state.manifest.environments.get("after") is None:
        return []  # the ecosystem lists no modules, or the run did not install the target
    before = state.paths.env_dir if env.root != state.paths.env_dir else None
    version = (state.manifest.environments.get("baseline") or {}).get(sdk_key(state))
    wheel_dirs = state.policy.wheel_dirs if state.policy is not None else ()
    return read(state.paths.worktree, before, env.root, wheel_dirs, sdk.name, version, sdk.to)
