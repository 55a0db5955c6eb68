"""Compiling a test peer (a small C++ program against a library found by pkg-config), cached.

The gz-transport peer (``cpp_peer``) and the libsdformat reference helper
(``libsdformat_reference``) are built the same way: the binary is reused while the source, the
library's flags and version and the compiler are unchanged, and is written under a temporary name
and renamed, so that parallel test sessions never run a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def build_cached(
    source: Path,
    pkg_config_module: str,
    cache_dir: Path,
    *,
    what: str,
    library: str,
    debian_package: str,
    unavailable: type[Exception],
    optimisation: str = "-O1",
) -> Path:
    """Compile ``source`` against ``pkg_config_module`` into ``cache_dir`` unless a current build is there.

    Args:
        source: The C++ file.
        pkg_config_module: The library's pkg-config name (e.g. ``sdformat12``).
        cache_dir: Where builds are kept.
        what: The program, for messages ("the libsdformat helper").
        library: The library, for messages ("libsdformat 12").
        debian_package: The Debian package with the library's development files.
        unavailable: The error raised when a tool or the library is missing.
        optimisation: The compiler's optimisation flag.

    Returns:
        The executable.

    Raises:
        unavailable: No compiler, no pkg-config, or pkg-config does not find the library.
        RuntimeError: The compiler failed.
    """
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        raise unavailable(f"no C++ compiler ({compiler}) to build {what}; run scripts/setup")
    if shutil.which("pkg-config") is None:
        raise unavailable(f"no pkg-config to find {library}; run scripts/setup (Debian pkg-config)")

    def pkg_config(*args: str) -> str:
        return subprocess.run(["pkg-config", *args], capture_output=True, text=True, check=True).stdout.strip()

    try:
        flags = pkg_config("--cflags", "--libs", pkg_config_module).split()
        version = pkg_config("--modversion", pkg_config_module)
    except subprocess.CalledProcessError:
        raise unavailable(
            f"pkg-config finds no {pkg_config_module}; run scripts/setup (Debian {debian_package})"
        ) from None
    compiler_version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(
        b"\0".join([source.read_bytes(), " ".join(flags).encode(), version.encode(), compiler_version.encode()])
    ).hexdigest()[:16]
    cache_dir = Path(cache_dir).resolve()  # the programs run in directories of their own
    cache_dir.mkdir(parents=True, exist_ok=True)
    binary = cache_dir / f"{source.stem}-{key}"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    fd, partial = tempfile.mkstemp(prefix=binary.name + ".", dir=cache_dir)
    os.close(fd)
    command = [compiler, "-std=c++17", optimisation, "-o", partial, str(source), *flags]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        Path(partial).unlink(missing_ok=True)
        raise RuntimeError(f"building {what} failed: {' '.join(command)}\n{result.stderr}")
    os.chmod(partial, 0o755)
    os.replace(partial, binary)
    return binary
