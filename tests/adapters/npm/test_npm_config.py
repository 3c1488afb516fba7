"""The caller's npm settings reach the sandboxed npm; credentials only through a private file, redacted."""

from __future__ import annotations

from pathlib import Path

from agentic_codemod.adapters.npm import npm_config
from agentic_codemod.tools.trace import Redactor

USER_NPMRC = """; the caller's npmrc
registry=https://npm.corp.example/
@acme:registry=https://acme.example/npm/
//npm.corp.example/:_authToken=${CORP_NPM_TOKEN}
//acme.example/npm/:_password="c2VjcmV0cGFzc3dvcmQ="
strict-ssl=false
script-shell=/bin/evil
"""


def test_caller_settings_are_split_into_variables_and_private_auth_lines(tmp_path: Path) -> None:
    (tmp_path / "user.npmrc").write_text(USER_NPMRC)
    environ = {
        "NPM_CONFIG_USERCONFIG": str(tmp_path / "user.npmrc"),
        "CORP_NPM_TOKEN": "npm_abcdefghijklmnop1234",
    }
    config = npm_config.read_caller_config(environ)
    env = npm_config.install_env(config)
    assert env == {
        "npm_config_registry": "https://npm.corp.example/",
        "npm_config_strict-ssl": "false",
        "npm_config_@acme:registry": "https://acme.example/npm/",
    }
    assert "npm_abcdefghijklmnop1234" not in repr(env) and "script-shell" not in repr(env)
    auth = npm_config.auth_lines(config)
    assert auth == (
        "//npm.corp.example/:_authToken=npm_abcdefghijklmnop1234\n//acme.example/npm/:_password=c2VjcmV0cGFzc3dvcmQ=\n"
    )
    secrets = npm_config.credentials(config)
    assert secrets == ["npm_abcdefghijklmnop1234", "c2VjcmV0cGFzc3dvcmQ="]
    redactor = Redactor(secrets)
    assert "npm_abcdefghijklmnop1234" not in redactor.redact("npm ERR! 401 token npm_abcdefghijklmnop1234")


def test_variables_win_over_the_file_and_unknown_keys_are_not_passed(tmp_path: Path) -> None:
    (tmp_path / "u").write_text("registry=https://file.example/\n")
    environ = {
        "npm_config_userconfig": str(tmp_path / "u"),
        "npm_config_registry": "https://env.example/",
        "npm_config_script_shell": "/bin/evil",
    }
    assert npm_config.install_env(npm_config.read_caller_config(environ)) == {
        "npm_config_registry": "https://env.example/"
    }


def test_a_token_in_a_url_is_a_credential() -> None:
    assert npm_config.credentials({"registry": "https://user:s3cr3tpass@npm.example/"}) == ["s3cr3tpass"]


def test_the_trace_redacts_an_auth_token_line_by_its_name() -> None:
    line = "//registry.example/:_authToken=abcdefghijklmnopqrstuvwxyz012345"
    assert "abcdefghijklmnopqrstuvwxyz012345" not in Redactor().redact(line)


def test_the_adapter_names_the_callers_npm_secrets_for_the_runs_redactor(tmp_path: Path) -> None:
    from agentic_codemod.adapters import get_adapter

    (tmp_path / ".npmrc").write_text("//npm.example/:_authToken=npm_tokenvalue0123456789\n")
    assert get_adapter("npm").credentials({"HOME": str(tmp_path)}) == ["npm_tokenvalue0123456789"]
    assert get_adapter("npm").credentials({"HOME": str(tmp_path / "none")}) == []
