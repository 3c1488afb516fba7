"""The fleet file: which repositories a task runs on, and how each one gets its packages.

defaults:                      # optional; every repository inherits them
  offline: true
  find_links: [../wheelhouse]  # paths are relative to this file
  no_index: true
  index_url: null
repos:
  - name: billing              # unique: names the run dir, the CI jobs and the fleet.json entry
    path: ../repos/billing     # a local git repository          (fleet --local)
    project: payments/billing  # the GitLab project path          (fleet --emit-gitlab-pipeline)
    ref: main                  # optional: branch to migrate (CI), default: the project's default
    target_branch: main        # optional: merge request target (CI), default: its default branch
    index_url: https://...     # optional override of any default

load_fleet(path) -> FleetFile         errors name the file, the entry and the field (InputError, exit 2)

`project`, `ref`, `target_branch`, `index_url` and `find_links` reach git, pip and GitLab: values.py says
what they may contain (no whitespace, no '$', nothing a shell or GitLab interprets, no leading '-').
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentic_codemod.errors import InputError
from agentic_codemod.fleet.values import check_link, check_value
from agentic_codemod.yaml_input import load_yaml_model

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


class RepoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offline: bool | None = None
    find_links: list[str] | None = None
    no_index: bool | None = None
    index_url: str | None = None

    @field_validator("find_links")
    @classmethod
    def _links(cls, value: list[str] | None) -> list[str] | None:
        for i, link in enumerate(value or []):
            try:
                check_link(link)
            except ValueError as exc:
                raise ValueError(f"entry {i}: {exc}") from None
        return value

    @field_validator("index_url")
    @classmethod
    def _index(cls, value: str | None) -> str | None:
        return None if value is None else check_value("url", value)


class FleetRepo(RepoOptions):
    name: str
    path: str | None = None
    project: str | None = None
    ref: str | None = None
    target_branch: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.fullmatch(value):
            raise ValueError("lower-case letters, digits, '.', '_' and '-' only (it names files and CI jobs)")
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        return None if value is None else check_value("project", value)

    @field_validator("ref", "target_branch")
    @classmethod
    def _ref(cls, value: str | None) -> str | None:
        return None if value is None else check_value("ref", value)

    @model_validator(mode="after")
    def _somewhere(self) -> FleetRepo:
        if not self.path and not self.project:
            raise ValueError("needs `path` (local runs) or `project` (GitLab), or both")
        return self


class FleetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Path = Path("fleet.yml")  # set by load_fleet; relative paths resolve against its folder
    defaults: RepoOptions = Field(default_factory=RepoOptions)
    repos: list[FleetRepo] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> FleetFile:
        seen: set[str] = set()
        for repo in self.repos:
            if repo.name in seen:
                raise ValueError(f"repository name {repo.name!r} appears twice")
            seen.add(repo.name)
        return self

    def option(self, repo: FleetRepo, key: str) -> object:
        own = getattr(repo, key)
        return own if own is not None else getattr(self.defaults, key)

    def local_path(self, repo: FleetRepo) -> Path:
        if not repo.path:
            raise InputError(f"{self.source}: repos[{repo.name}].path is needed to run the fleet locally")
        return (self.source.parent / repo.path).resolve()

    def find_links(self, repo: FleetRepo) -> list[str]:
        links = self.option(repo, "find_links") or []
        assert isinstance(links, list)
        return [str((self.source.parent / p).resolve()) if "://" not in p else p for p in links]

    def run_args(self, repo: FleetRepo, *, local: bool) -> list[str]:
        """The `run` flags for this repository (local paths resolved only for local runs)."""
        args: list[str] = ["--offline"] if self.option(repo, "offline") else []
        links = self.find_links(repo) if local else list(self.option(repo, "find_links") or [])  # type: ignore[call-overload]
        for link in links:
            args += ["--find-links", link]
        if self.option(repo, "no_index"):
            args.append("--no-index")
        index = self.option(repo, "index_url")
        if index:
            args += ["--index-url", str(index)]
        return args


def load_fleet(path: Path) -> FleetFile:
    hint = "a mapping with `repos:`; the fields and their types: schemas/fleet.schema.json"
    extra = {"source": Path(path).resolve()}
    return load_yaml_model(path, FleetFile, what="fleet file", hint=hint, extra=extra, describe=_first_error)


def _first_error(exc: ValidationError, raw: dict[str, object]) -> str:
    """'repos[1] (name 'orders'), field 'ref': message' — the entry by position and by name."""
    err = exc.errors()[0]
    loc = list(err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    where = ""
    if len(loc) >= 2 and loc[0] == "repos" and isinstance(loc[1], int):
        entries = raw.get("repos")
        entry = entries[loc[1]] if isinstance(entries, list) and loc[1] < len(entries) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"repos[{loc[1]}]" + (f" (name {name!r})" if isinstance(name, str) else "") + ", "
        loc = loc[2:]
    field = ".".join(str(p) for p in loc) or "<entry>"
    return f"{where}field {field!r}: {message}"
