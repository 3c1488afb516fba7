"""Fleets: one task over many repositories (ARCHITECTURE.md §11).

    repos.py     the fleet file (load_fleet -> FleetFile)
    emit.py      GitLab child pipeline: one run -> gate -> publish chain per repository
    local.py     local bounded process pool with a progress display (run_local -> FleetReport)
    progress.py  what a running repository is doing, read from its run dir
    record.py    fleet.json entries and the resume rule
    summary.py   the summary table
    cli.py       `agentic-codemod fleet` (add_fleet_parser, fleet_command)

In CI, GitLab is the scheduler; locally, the pool exists only to try a migration package on a few
repositories before it goes to CI.
"""
