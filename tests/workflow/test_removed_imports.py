"""removed_imports: a candidate that still imports an SDK module the target no longer ships never succeeds,
whether or not its tests import that file."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from agentic_codemod.adapters.types import VerificationEnv
from agentic_codemod.config import Settings
from agentic_codemod.models import RunManifest
from agentic_codemod.task import load_task
from agentic_codemod.tools.sandbox import Policy
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow import removed_imports
from agentic_codemod.workflow.state import RunPaths, RunSetup, RunState

ROOT = Path(__file__).resolve().parents[2]
RULES_TASK = ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml"
# black's layout of a one-name import that does not fit its line: the codemod's rules miss it
PARENTHESIZED = """\
from acme.utils import (
    paginate,
)


def sync(client):
    return list(paginate(client, "/o"))
"""
V1 = ["acme/__init__.py", "acme/client.py", "acme/errors.py", "acme/utils.py", "acme/testing.py"]
V2 = ["acme/__init__.py", "acme/client.py", "acme/exceptions.py", "acme/testing.py"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


@pytest.mark.slow
def test_an_untested_module_importing_a_removed_module_ends_the_run_for_a_human(make_repo, run_codemod):
    repo = make_repo("parenthesized", {"src/acme_app/sync.py": PARENTHESIZED})

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    m = result.manifest
    assert result.code == 3, m["reason"]
    assert m["status"] == "requires_human"
    assert "src/acme_app/sync.py:1 imports acme.utils, which acme-sdk 2.0.0 no longer ships" in m["reason"]
    # both test runs were green: only the backstop saw it
    assert all(v["passed"] for v in m["verifications"])
    # the merge request's "Needs a human" names it too (it said "nothing" beside requires_human)
    mr = result.artifact("merge_request.md").read_text()
    needs = mr.split("### Needs a human", 1)[1].split("###", 1)[0]
    assert "src/acme_app/sync.py:1 imports acme.utils" in needs and "- nothing" not in needs


def install(env: Path, dist_info: str, files: list[str]) -> None:
    """A venv's site-packages holding `files` under the dist-info `dist_info`, its RECORD listing them."""
    site = env / "lib" / "python3.11" / "site-packages"
    for rel in files:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    (site / dist_info).mkdir(parents=True)
    (site / dist_info / "RECORD").write_text("".join(f"{r},,\n" for r in [*files, f"{dist_info}/RECORD"]))


def make_state(tmp_path: Path, files: dict[str, str], *, copied: bool = True) -> RunState:
    """A run at its gate: the worktree holds `files`, the baseline environment acme-sdk 1.4.0 and the
    after environment 2.0.0 (its copy, or with copied=False the same folder, bumped in place)."""
    state = RunState(
        task=load_task(RULES_TASK),
        settings=Settings(),
        repo=tmp_path,
        paths=RunPaths(tmp_path / "run"),
        manifest=RunManifest(run_id="t", tool_version="0", mode="offline", started_at="now"),
        context_root=ROOT,
        trace=Trace(None),
    )
    worktree = state.paths.worktree
    for rel, text in files.items():
        (worktree / rel).parent.mkdir(parents=True, exist_ok=True)
        (worktree / rel).write_text(text)
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *argv], cwd=worktree, check=True, env={**os.environ, **GIT_ENV})
    if copied:
        install(state.paths.env_dir, "acme_sdk-1.4.0.dist-info", V1)
    after = state.paths.env_after if copied else state.paths.env_dir
    install(after, "acme_sdk-2.0.0.dist-info", V2)
    state.env = VerificationEnv(after / "bin" / "python", after)
    state.manifest.environments = {"baseline": {"acme-sdk": "1.4.0"}, "after": {"acme-sdk": "2.0.0"}}
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    parts: dict[str, object] = dict.fromkeys(("context", "adapter", "runner", "workspace"))
    policy = Policy("process", after, wheel_dirs=(wheels,))
    state.setup = RunSetup(**parts, policy=policy, base_commit="")  # type: ignore[arg-type]
    return state


def test_each_import_of_a_module_the_target_dropped_is_an_item(tmp_path: Path) -> None:
    state = make_state(
        tmp_path, {"src/app/sync.py": PARENTHESIZED, "src/app/ok.py": "from acme import client\n"}
    )

    assert removed_imports.items(state) == [
        "src/app/sync.py:1 imports acme.utils, which acme-sdk 2.0.0 no longer ships"
    ]


def test_an_attribute_of_the_sdk_imported_as_a_module_is_an_item(tmp_path: Path) -> None:
    """`import acme as sdk` then `sdk.errors.NotFound`: an AttributeError on 2.0, though the import itself
    names acme only."""
    source = (
        "import acme as sdk\n\n\ndef get(c):\n    try:\n        return c.get()\n"
        "    except sdk.errors.NotFound:\n        return None\n"
    )
    state = make_state(tmp_path, {"src/app/get.py": source})

    assert removed_imports.items(state) == [
        "src/app/get.py:7 imports acme.errors, which acme-sdk 2.0.0 no longer ships"
    ]


def test_a_module_another_distribution_of_the_target_ships_is_not_gone(tmp_path: Path) -> None:
    """dbt-core 1.8 moved dbt.adapters into dbt-adapters under the same import path: the target's
    environment still has it. A distribution whose RECORD cannot be read ships nothing (fail closed)."""
    state = make_state(tmp_path, {"src/app/sync.py": PARENTHESIZED, "src/app/e.py": "import acme.errors\n"})
    after = state.paths.env_after
    install(after, "acme_utils-1.0.0.dist-info", ["acme/utils.py"])
    site = after / "lib" / "python3.11" / "site-packages"
    (site / "acme_errors-1.0.0.dist-info" / "RECORD").mkdir(parents=True)  # unreadable: a folder

    assert removed_imports.items(state) == [
        "src/app/e.py:1 imports acme.errors, which acme-sdk 2.0.0 no longer ships"
    ]


def test_a_file_naming_the_sdk_that_does_not_parse_is_an_item(tmp_path: Path) -> None:
    state = make_state(tmp_path, {"legacy.py": 'print "acme"\n', "other.py": 'print "unrelated"\n'})

    [item] = removed_imports.items(state)

    assert item.startswith("legacy.py cannot be read: SyntaxError")
    assert item.endswith(
        "it names acme, whose modules acme.errors, acme.utils acme-sdk 2.0.0 no longer ships"
    )


def test_bumped_in_place_the_from_version_is_read_from_its_wheel(tmp_path: Path) -> None:
    state = make_state(tmp_path, {"sync.py": "import acme.errors as e\n"}, copied=False)
    assert removed_imports.items(state) == []  # no wheel of 1.4.0 at hand: nothing to compare with

    with zipfile.ZipFile(tmp_path / "wheels" / "acme_sdk-1.4.0-py3-none-any.whl", "w") as wheel:
        record = [*V1, "acme_sdk-1.4.0.dist-info/RECORD"]
        wheel.writestr("acme_sdk-1.4.0.dist-info/RECORD", "".join(f"{r},,\n" for r in record))

    assert removed_imports.items(state) == [
        "sync.py:1 imports acme.errors, which acme-sdk 2.0.0 no longer ships"
    ]


def test_nothing_is_found_without_both_module_lists(tmp_path: Path) -> None:
    state = make_state(tmp_path, {"sync.py": "import acme.errors\n"})
    npm = state.task.sdk.model_copy(update={"ecosystem": "npm"})
    state.task = state.task.model_copy(update={"sdk": npm})
    assert removed_imports.items(state) == []  # npm: not covered

    state = make_state(tmp_path / "unlisted", {"sync.py": "import acme.errors\n"})
    state.manifest.environments["after"] = None  # the run never listed the target's environment
    assert removed_imports.items(state) == []
