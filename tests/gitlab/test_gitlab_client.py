"""The merge request client against a loopback fake of the GitLab API: payloads, auth, idempotency, faults."""

from __future__ import annotations

import socket

import pytest
from fake_gitlab import JOB_TOKEN, TOKEN, FakeGitLab

from agentic_codemod.errors import EXIT_BAD_INPUT, EXIT_REJECTED, EXIT_UNAVAILABLE, InputError
from agentic_codemod.publish.gitlab import (
    GitLabClient,
    GitLabRejected,
    GitLabToken,
    GitLabUnavailable,
    MergeRequestSpec,
    RetryPolicy,
    token_from_env,
)

FAST = RetryPolicy(attempts=3, backoff_s=0.0, timeout_s=5.0)
SPEC = MergeRequestSpec(
    source_branch="codemod/acme-sdk-2-rules-4424b1cf291d",
    target_branch="main",
    title="Migrate acme-sdk to 2.0.0",
    description="Body with findings.",
    labels=("agentic-codemod", "acme-sdk-2-rules"),
)


def client(fake: FakeGitLab, token: GitLabToken | None = None, project: str = "group/app") -> GitLabClient:
    return GitLabClient(
        fake.api_url, project, token or GitLabToken("PRIVATE-TOKEN", TOKEN, "GITLAB_TOKEN"), FAST
    )


def test_creates_the_merge_request_with_the_payload_and_the_private_token(fake_gitlab: FakeGitLab) -> None:
    result = client(fake_gitlab).upsert(SPEC)

    assert result.action == "created" and result.iid == 1
    listed, created = fake_gitlab.requests
    assert (listed.method, listed.path) == ("GET", "/api/v4/projects/group%2Fapp/merge_requests")
    assert listed.query == {"state": "opened", "source_branch": SPEC.source_branch, "target_branch": "main"}
    assert created.method == "POST"
    assert created.body == {
        "source_branch": SPEC.source_branch,
        "target_branch": "main",
        "remove_source_branch": True,
        "title": SPEC.title,
        "description": SPEC.description,
        "labels": "agentic-codemod,acme-sdk-2-rules",
    }
    assert all(
        r.headers.get("PRIVATE-TOKEN") == TOKEN and "JOB-TOKEN" not in r.headers for r in fake_gitlab.requests
    )


def test_the_ci_job_token_goes_in_the_job_token_header(fake_gitlab: FakeGitLab) -> None:
    token = token_from_env({"CI_JOB_TOKEN": JOB_TOKEN})
    assert token is not None
    client(fake_gitlab, token).upsert(SPEC)

    assert all(r.headers.get("JOB-TOKEN") == JOB_TOKEN for r in fake_gitlab.requests)
    assert not any("PRIVATE-TOKEN" in r.headers for r in fake_gitlab.requests)


def test_gitlab_token_wins_over_the_job_token_and_neither_means_none() -> None:
    both = token_from_env({"GITLAB_TOKEN": TOKEN, "CI_JOB_TOKEN": JOB_TOKEN})
    assert both is not None and both.header == "PRIVATE-TOKEN" and both.source == "GITLAB_TOKEN"
    assert token_from_env({"GITLAB_TOKEN": "", "OTHER": "x"}) is None


def test_the_token_never_shows_in_repr_or_str() -> None:
    token = GitLabToken("PRIVATE-TOKEN", TOKEN, "GITLAB_TOKEN")
    assert TOKEN not in repr(token) and TOKEN not in str(token)


def test_a_second_upsert_with_the_same_text_changes_nothing(fake_gitlab: FakeGitLab) -> None:
    c = client(fake_gitlab)
    first, second = c.upsert(SPEC), c.upsert(SPEC)

    assert (first.action, second.action) == ("created", "unchanged")
    assert first.iid == second.iid
    assert [r.method for r in fake_gitlab.requests] == ["GET", "POST", "GET"]
    assert len(fake_gitlab.merge_requests) == 1


def test_changed_text_updates_the_open_merge_request_in_place(fake_gitlab: FakeGitLab) -> None:
    c = client(fake_gitlab)
    c.upsert(SPEC)
    newer = MergeRequestSpec(**{**SPEC.__dict__, "title": "Migrate acme-sdk to 2.0.0 (rerun)"})
    result = c.upsert(newer)

    assert result.action == "updated" and result.iid == 1
    put = fake_gitlab.calls("PUT")[0]
    assert put.path == "/api/v4/projects/group%2Fapp/merge_requests/1"
    assert put.body == {
        "title": newer.title,
        "description": SPEC.description,
        "labels": "agentic-codemod,acme-sdk-2-rules",
    }
    assert len(fake_gitlab.merge_requests) == 1 and fake_gitlab.merge_requests[0]["title"] == newer.title


def test_401_pauses_at_once_without_a_retry_loop(fake_gitlab: FakeGitLab) -> None:
    wrong = GitLabToken("PRIVATE-TOKEN", "glpat-wrong-token-000000000000", "GITLAB_TOKEN")
    with pytest.raises(GitLabUnavailable) as caught:
        client(fake_gitlab, wrong).upsert(SPEC)

    assert caught.value.exit_code == EXIT_UNAVAILABLE
    assert len(fake_gitlab.requests) == 1
    assert "401" in str(caught.value) and "glpat-wrong" not in str(caught.value)


def test_5xx_is_retried_a_bounded_number_of_times_then_succeeds(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.fail_next = [502, 503]
    result = client(fake_gitlab).upsert(SPEC)

    assert result.action == "created"
    assert [r.method for r in fake_gitlab.requests] == ["GET", "GET", "GET", "POST"]


def test_5xx_beyond_the_bound_pauses_with_75(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.fail_next = [500] * 10
    with pytest.raises(GitLabUnavailable) as caught:
        client(fake_gitlab).upsert(SPEC)

    assert caught.value.exit_code == EXIT_UNAVAILABLE
    assert len(fake_gitlab.requests) == FAST.attempts
    assert fake_gitlab.merge_requests == []


def test_409_after_a_create_that_went_through_updates_the_existing_one(fake_gitlab: FakeGitLab) -> None:
    """The POST created the MR but answered 502; the retried POST gets 409; the client finds and keeps it."""
    fake_gitlab.create_then_fail = 502
    result = client(fake_gitlab).upsert(SPEC)

    assert result.iid == 1 and result.action == "unchanged"
    assert [r.method for r in fake_gitlab.requests] == ["GET", "POST", "POST", "GET"]
    assert len(fake_gitlab.merge_requests) == 1


def test_409_with_no_open_merge_request_is_a_rejection(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.fail_next = [200, 409]  # the first GET answers the scripted 200 body, the POST 409
    with pytest.raises(GitLabRejected) as caught:
        client(fake_gitlab).upsert(SPEC)
    assert caught.value.exit_code == EXIT_REJECTED and "409" in str(caught.value)


def test_unknown_project_is_bad_input(fake_gitlab: FakeGitLab) -> None:
    with pytest.raises(InputError) as caught:
        client(fake_gitlab, project="group/missing").upsert(SPEC)
    assert caught.value.exit_code == EXIT_BAD_INPUT and "404" in str(caught.value)


def test_an_unreachable_gitlab_pauses_after_bounded_attempts() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = GitLabClient(
        f"http://127.0.0.1:{port}/api/v4", "group/app", GitLabToken("PRIVATE-TOKEN", TOKEN), FAST
    )
    with pytest.raises(GitLabUnavailable) as caught:
        c.upsert(SPEC)
    assert caught.value.exit_code == EXIT_UNAVAILABLE and "3 attempt" in str(caught.value)
