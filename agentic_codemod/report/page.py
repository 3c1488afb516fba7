"""Rendering a page: jinja2 with autoescape on, one inline stylesheet and script allowed by their hashes.

    render(template, **data) -> str
    environment()                the templates compiled ahead of time (precompiled.py) where they are
                                 today's, else compiled from source

Every page is one self-contained file: no external asset, no network. Its Content-Security-Policy forbids
every load (default-src 'none') and allows only this package's own stylesheet and script by sha256, so
even a string that escaped the escaping could not run (inline event handlers, other scripts) or reach out.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from pathlib import Path

from jinja2 import BaseLoader, Environment, FileSystemLoader, StrictUndefined

TEMPLATES = Path(__file__).with_name("templates")
# What the compiled form of a template depends on besides its source (precompiled.py's manifest records it).
OPTIONS = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True}


@cache
def environment() -> Environment:
    """The templates as compiled ahead of time (precompiled.py) where they are today's, else from source."""
    from agentic_codemod.report import precompiled

    return new_environment(precompiled.loader() or FileSystemLoader(TEMPLATES))


def new_environment(loader: BaseLoader) -> Environment:
    env = Environment(
        loader=loader,
        undefined=StrictUndefined,
        autoescape=OPTIONS["autoescape"],
        trim_blocks=OPTIONS["trim_blocks"],
        lstrip_blocks=OPTIONS["lstrip_blocks"],
    )
    env.filters["seconds"] = seconds
    env.filters["short"] = lambda sha: sha[:12] if sha else "none"
    return env


def asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def policy(css: str, script: str | None) -> str:
    scripts = sha256_source(script) if script else "'none'"
    return (
        f"default-src 'none'; style-src {sha256_source(css)}; script-src {scripts}; img-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def render(template: str, script: str | None = None, **data: object) -> str:
    css = asset("page.css")
    js = asset(script) if script else None
    return environment().get_template(template).render(css=css, script=js, csp=policy(css, js), **data)


def seconds(value: float | None) -> str:
    if value is None:
        return "unknown"
    if value < 60:
        return f"{value:.1f} s" if value >= 0.1 else f"{value * 1000:.0f} ms"
    return f"{int(value // 60)} min {value % 60:.0f} s"


def write(path: Path, text: str) -> Path:
    """Whole or not at all: a reader never sees half a page."""
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
