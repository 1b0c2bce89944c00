"""Installing restate-server from npm under the user's npm configuration; npm's own error when it fails."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paidtwice._exceptions import ProvisionError
from paidtwice._pins import RESTATE_SERVER_VERSION
from paidtwice.engine._ports import leased_ports
from paidtwice.engine._provision import ensure_server_binary, npm_error, run_npm


def test_the_machines_npm_config_applies_under_a_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # npm's global config lives under npm's own prefix: here a machine of the test's making, whose config
    # names a cafile (as one behind a proxy that re-signs TLS would).
    machine = tmp_path / "machine"
    (machine / "etc").mkdir(parents=True)
    cafile = str(machine / "corporate-ca.pem")
    (machine / "etc" / "npmrc").write_text(f"cafile={cafile}\n")
    monkeypatch.setenv("NPM_CONFIG_PREFIX", str(machine))
    monkeypatch.delenv("npm_config_prefix", raising=False)
    monkeypatch.delenv("npm_config_cafile", raising=False)
    monkeypatch.delenv("NPM_CONFIG_CAFILE", raising=False)
    staging = tmp_path / "staging"
    staging.mkdir()
    assert not (staging / "etc" / "npmrc").exists()
    # A bare --prefix loses the machine's config: what the installer must not do.
    bare = subprocess.run(
        ["npm", "config", "get", "cafile", "--prefix", str(staging)], capture_output=True, text=True
    )
    assert bare.stdout.strip() != cafile
    done = run_npm(["config", "get", "cafile"], prefix=staging)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == cafile


def test_a_failed_install_prints_npms_own_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with leased_ports(1) as [port]:  # nothing listens there: the registry refuses the connection
        monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{port}/")
        monkeypatch.setenv("npm_config_fetch_retries", "0")
        monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))  # nothing cached to fall back on
        with pytest.raises(ProvisionError) as failed:
            ensure_server_binary(RESTATE_SERVER_VERSION, root=tmp_path / "cache", echo=lambda m: None)
    message = str(failed.value)
    assert f"failed: FetchError: request to http://127.0.0.1:{port}/" in message, message
    assert "ECONNREFUSED" in message and "(log: " in message and "\n" not in message, message
    assert not any((tmp_path / "cache" / "restate-server").glob(".*-*")), "the staging directory is left"


def test_npm_error_reads_the_code_and_the_message() -> None:
    output = (
        "npm error code SELF_SIGNED_CERT_IN_CHAIN\n"
        "npm error errno SELF_SIGNED_CERT_IN_CHAIN\n"
        "npm error request to https://registry.npmjs.org/x failed, reason: self-signed certificate in chain\n"
        "npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log\n"
    )
    assert npm_error(output) == (
        "SELF_SIGNED_CERT_IN_CHAIN: request to https://registry.npmjs.org/x failed, reason: self-signed "
        "certificate in chain (log: /root/.npm/_logs/debug-0.log)"
    )
    assert npm_error("") == "no output"
