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
        "NPM_CONFIG_GLOBALCONFIG": str(tmp_path / "no-global-npmrc"),
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
        "npm_config_globalconfig": str(tmp_path / "no-global-npmrc"),
        "npm_config_registry": "https://env.example/",
        "npm_config_script_shell": "/bin/evil",
    }
    assert npm_config.install_env(npm_config.read_caller_config(environ)) == {
        "npm_config_registry": "https://env.example/"
    }


def test_the_global_npmrc_is_read_under_the_users_and_hidden_where_it_holds_a_secret(tmp_path: Path) -> None:
    """helper-44: hiding npm's global npmrc from the boxes (it held a token) also hid its scoped registry,
    and npm would have asked the public registry for @acme packages. It is read like the user's (under
    it, as npm does), so the installs get its settings as variables and its token as an auth line."""
    (tmp_path / "global").write_text(
        "@acme:registry=https://acme.example/npm/\n//acme.example/npm/:_authToken=npm_GL0BALTOKEN99\n"
        "cafile=/etc/ssl/certs/corp.pem\nregistry=https://global.example/\n"
    )
    (tmp_path / "user").write_text("registry=https://user.example/\n")
    (tmp_path / "plain").write_text("cafile=/etc/ssl/certs/corp.pem\n")
    environ = {
        "NPM_CONFIG_GLOBALCONFIG": str(tmp_path / "global"),
        "NPM_CONFIG_USERCONFIG": str(tmp_path / "user"),
    }
    config = npm_config.read_caller_config(environ)
    assert npm_config.install_env(config) == {
        "npm_config_registry": "https://user.example/",
        "npm_config_cafile": "/etc/ssl/certs/corp.pem",
        "npm_config_@acme:registry": "https://acme.example/npm/",
    }
    assert npm_config.auth_lines(config) == "//acme.example/npm/:_authToken=npm_GL0BALTOKEN99\n"
    assert npm_config.credentials(config) == ["npm_GL0BALTOKEN99"]
    assert str(tmp_path / "global") in npm_config.secret_files(environ)
    assert str(tmp_path / "user") not in npm_config.secret_files(environ)
    plain = {**environ, "NPM_CONFIG_GLOBALCONFIG": str(tmp_path / "plain")}
    assert str(tmp_path / "plain") not in npm_config.secret_files(plain)  # npm in the box may need it


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
