"""Publishing an approved candidate (ARCHITECTURE.md §3, the last step): the `publish` command (cli.py),
the re-check that the candidate on disk is the approved one (check.py), the gates re-derived from base +
patch (gates.py), branch/commit/push with hardened git (remote_git.py, runner.py) and the merge request
(gitlab.py)."""
