"""The whole codemod pipeline — context → run → gate (manual) → publish — under gitlab-ci-local.

No GitLab server: the shell executor runs the template's jobs on this machine; the repository to migrate
is a bare repository on disk reached through `CI_SERVER_URL=file://...` (and a git `insteadOf` for the run
job's HTTPS clone), the merge request API is the loopback fake. Needs the `publish` and `fleet`
subcommands wired into cli.py, gitlab-ci-local and rsync; skipped when the tools are absent.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci_model import gitlab_ci_local, project_copy
from fake_gitlab import TOKEN, FakeGitLab
from fixtures_support import ACME_APP, materialize

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(gitlab_ci_local() is None, reason="gitlab-ci-local (npm) or rsync is not installed"),
]
JOBS = ["codemod:context", "codemod:run", "codemod:gate", "codemod:publish"]


@pytest.fixture
def acme_gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab(tokens={("PRIVATE-TOKEN", TOKEN)}, project="acme/acme-app").start()
    yield fake
    fake.stop()


def test_the_codemod_pipeline_runs_end_to_end(tmp_path: Path, wheels: Path, acme_gitlab: FakeGitLab) -> None:
    project = project_copy(tmp_path / "project")
    remotes = tmp_path / "remotes"
    materialize.materialize(ACME_APP, tmp_path / "acme-src")
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(tmp_path / "acme-src"), str(remotes / "acme" / "acme-app.git")],
        check=True,
    )
    (tmp_path / "home").mkdir()
    variables = {
        "CODEMOD_TASK": "fixtures/tasks/acme-sdk-2-rules.yml",
        "CODEMOD_PROJECT": "acme/acme-app",
        "CODEMOD_OFFLINE": "true",
        "CODEMOD_FIND_LINKS": str(wheels),
        "CODEMOD_NO_INDEX": "true",
        "CODEMOD_PIP_SPEC": "",  # the tool is already installed next to this interpreter
        "CODEMOD_TARGET_BRANCH": "main",
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "CI_SERVER_URL": f"file://{remotes}",
        "CI_SERVER_HOST": "gitlab.test",
        "CI_JOB_TOKEN": "job-token-for-the-clone",
        "GITLAB_TOKEN": TOKEN,
        "CI_API_V4_URL": acme_gitlab.api_url,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.file://{remotes}/.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://gitlab-ci-token:job-token-for-the-clone@gitlab.test/",
    }
    argv = [
        str(gitlab_ci_local()),
        "--force-shell-executor",
        "--needs",
        "--manual",
        "codemod:gate",
        "codemod:publish",
    ]
    for key, value in variables.items():
        argv += ["--variable", f"{key}={value}"]
    done = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=900)

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    for job in JOBS:
        assert f"PASS  {job}" in done.stdout
    assert TOKEN not in done.stdout + done.stderr
    branches = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/codemod/"],
        cwd=remotes / "acme" / "acme-app.git",
        capture_output=True,
        text=True,
        check=True,
    )
    assert branches.stdout.startswith("codemod/acme-sdk-2-rules-")
    (mr,) = acme_gitlab.merge_requests
    assert mr["source_branch"] == branches.stdout.strip() and mr["target_branch"] == "main"
