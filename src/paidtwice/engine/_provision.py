"""Install restate-server and restatectl from their npm packages, once per version, into paidtwice's cache.

Each binary ships inside an npm package (`@restatedev/restate-server`, `@restatedev/restatectl`; a platform
sub-package holds it), so `npm install` from the registry is all it takes. Installs go to a temporary
directory that is renamed into place when complete, under a lock, so two labs provisioning at once neither
collide nor see half an install.
"""

from __future__ import annotations

import fcntl
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from paidtwice._exceptions import ProvisionError
from paidtwice._pins import NODE_VERSION, RESTATE_SERVER_VERSION, RESTATE_SERVER_VERSIONS, RESTATECTL_VERSION

__all__ = [
    "cache_root",
    "ensure_node_binary",
    "ensure_restatectl",
    "ensure_server_binary",
    "node_binary_path",
    "npm_error",
    "run_npm",
    "server_binary_path",
]


def cache_root() -> Path:
    """Where paidtwice keeps installed servers: $PAIDTWICE_CACHE, else ~/.cache/paidtwice."""
    env = os.environ.get("PAIDTWICE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paidtwice"


def _platform_package(tool: str) -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    system = platform.system().lower()
    if arch is None or system not in ("linux", "darwin"):
        raise ProvisionError(f"{tool} has no npm build for {system}/{machine}")
    return f"{tool}-{system}-{arch}"


def _binary_path(tool: str, version: str, root: Path | None) -> Path:
    root = root or cache_root()
    return root / tool / version / "node_modules" / "@restatedev" / _platform_package(tool) / "bin" / tool


def run_npm(args: Sequence[str], *, prefix: Path, npm: str = "npm") -> subprocess.CompletedProcess[str]:
    """`npm ARGS` on the package tree at `prefix`, under the user's own npm configuration.

    `--prefix` also moves npm's global config file to PREFIX/etc/npmrc, where there is none, so the cafile,
    proxy or registry set in the machine's would be ignored (and an install behind a proxy that re-signs
    TLS fails with SELF_SIGNED_CERT_IN_CHAIN). The machine's global config is asked for first, without the
    prefix, and passed back explicitly.
    """
    asked = subprocess.run(
        [npm, "config", "get", "globalconfig"], capture_output=True, text=True, check=False
    )
    globalconfig = asked.stdout.strip() if asked.returncode == 0 else ""
    keep = ["--globalconfig", globalconfig] if globalconfig else []
    return subprocess.run(
        [npm, *args, "--prefix", str(prefix), *keep], capture_output=True, text=True, check=False
    )


def npm_error(output: str) -> str:
    """npm's own error, in one line, from what a failed npm printed: "CODE: message (log: PATH)"."""
    code = ""
    message = ""
    log = ""
    for raw in output.splitlines():
        line = re.sub(r"^npm (error|ERR!)\s?", "", raw).strip()
        if not line:
            continue
        if found := re.match(r"A complete log of this run can be found in:?\s*(.+)", line):
            log = found.group(1)
        elif found := re.match(r"code (\S+)$", line):
            code = found.group(1)
        elif re.match(r"(errno|syscall) \S+$", line) or message:
            continue
        else:
            message = line
    words = ": ".join(part for part in (code if code not in message else "", message) if part)
    if not words:
        lines = output.strip().splitlines()
        words = lines[-1] if lines else "no output"
    return words + (f" (log: {log})" if log else "")


def server_binary_path(version: str, *, root: Path | None = None) -> Path:
    return _binary_path("restate-server", version, root)


def ensure_server_binary(
    version: str = RESTATE_SERVER_VERSION,
    *,
    root: Path | None = None,
    echo: Callable[[str], None] = print,
) -> Path:
    """Return the path of restate-server `version`, installing it from npm on first use."""
    if version not in RESTATE_SERVER_VERSIONS:
        known = ", ".join(RESTATE_SERVER_VERSIONS)
        raise ProvisionError(f"restate-server {version} is not one paidtwice knows (known: {known})")
    return _ensure_npm_binary("restate-server", version, root=root, echo=echo)


def ensure_restatectl(
    version: str = RESTATECTL_VERSION, *, root: Path | None = None, echo: Callable[[str], None] = print
) -> Path:
    """Return the path of restatectl `version`, installing it from npm on first use."""
    return _ensure_npm_binary("restatectl", version, root=root, echo=echo)


def _ensure_npm_binary(tool: str, version: str, *, root: Path | None, echo: Callable[[str], None]) -> Path:
    root = root or cache_root()
    return _install_from_npm(
        tool, f"@restatedev/{tool}", version, _binary_path(tool, version, root), root / tool, echo=echo
    )


def _install_from_npm(
    what: str, package: str, version: str, binary: Path, versions_dir: Path, *, echo: Callable[[str], None]
) -> Path:
    """`binary` (inside versions_dir/version), installing `package@version` from npm there on first use: into
    a staging directory renamed into place once the binary is there, under a lock, so two labs installing at
    once do not see half an install."""
    if binary.is_file():
        return binary
    versions_dir.mkdir(parents=True, exist_ok=True)
    with (versions_dir / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.is_file():
            return binary
        npm = shutil.which("npm")
        if npm is None:
            raise ProvisionError(f"npm is not on PATH; install Node.js with npm to provision {what}")
        echo(f"paidtwice: installing {what} {version} from npm into {versions_dir / version} ...")
        staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=versions_dir))
        try:
            done = run_npm(
                ["install", "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"],
                prefix=staging,
                npm=npm,
            )
            if done.returncode != 0:
                raise ProvisionError(
                    f"npm install {package}@{version} failed: {npm_error(done.stderr or done.stdout)}"
                )
            staged = binary.relative_to(versions_dir / version)
            if not (staging / staged).is_file():
                raise ProvisionError(f"npm installed {package}@{version} but no binary at {staged}")
            final = versions_dir / version
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        echo(f"paidtwice: {what} {version} ready")
    return binary


def _node_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    system = platform.system().lower()
    if arch is None or system not in ("linux", "darwin"):
        raise ProvisionError(f"Node.js has no npm build for {system}/{machine}")
    return f"node-{system}-{arch}"


def node_binary_path(version: str = NODE_VERSION, *, root: Path | None = None) -> Path:
    root = root or cache_root()
    return root / "node" / version / "node_modules" / _node_package() / "bin" / "node"


def ensure_node_binary(
    version: str = NODE_VERSION,
    *,
    root: Path | None = None,
    echo: Callable[[str], None] = print,
) -> Path:
    """Return the path of Node.js `version` (the binary inside npm's node-PLATFORM-ARCH package), installing
    it from npm on first use, the way restate-server is installed."""
    root = root or cache_root()
    binary = node_binary_path(version, root=root)
    return _install_from_npm("Node.js", _node_package(), version, binary, root / "node", echo=echo)
