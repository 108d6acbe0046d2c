"""The Python package as PyPI would get it, checked with the tools PyPI users run.

`python -m build` makes the sdist and then the wheel from that sdist (as pip does for an
sdist); a second wheel built straight from the checkout must be the same. `twine check`
and `check-wheel-contents` judge them; `pipx install .` into a fresh folder must give both
commands, and the installed server must report the package's version. Builds use the
hatchling installed here (`--no-isolation`), so nothing is downloaded for them.
"""

from __future__ import annotations

import email.message
import email.parser
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import glassllm
from glassllm import PACKAGED, packaged_path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = Path(sysconfig.get_path("scripts"))


def _run(*command: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist + wheel (built from the sdist), as `python -m build` makes them."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out)
    return out


def _one(folder: Path, pattern: str) -> Path:
    (found,) = folder.glob(pattern)
    return found


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


def test_build_makes_an_sdist_and_a_wheel_that_twine_accepts(dist):
    sdist = _one(dist, f"glassllm-{glassllm.__version__}.tar.gz")
    wheel = _one(dist, f"glassllm-{glassllm.__version__}-py3-none-any.whl")
    _run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)


def test_the_wheel_holds_the_two_packages_and_the_tokenizers_only(dist):
    wheel = _one(dist, "*.whl")
    output = _run(sys.executable, "-m", "check_wheel_contents", wheel)
    assert "OK" in output, output
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"glassllm", "glassllm_server", f"glassllm-{glassllm.__version__}.dist-info"}, tops
    for name in PACKAGED:
        assert f"glassllm/data/{packaged_path(name).name}" in names
    assert "glassllm/py.typed" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    # Every module of the checkout's two packages, and nothing beside them.
    expected = {
        path.relative_to(root).as_posix()
        for root, package in ((REPO, "glassllm"), (REPO / "server", "glassllm_server"))
        for path in (root / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {name for name in names if ".dist-info/" not in name} == expected


def test_the_sdist_builds_the_same_wheel_as_the_checkout(dist, tmp_path):
    _run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp_path)
    from_checkout, from_sdist = _one(tmp_path, "*.whl"), _one(dist, "*.whl")
    with zipfile.ZipFile(from_checkout) as one, zipfile.ZipFile(from_sdist) as other:
        assert sorted(one.namelist()) == sorted(other.namelist())
        for name in one.namelist():
            assert one.read(name) == other.read(name), f"{name} differs between the two wheels"


def test_metadata_has_the_version_classifiers_and_no_invented_url(dist):
    metadata = _metadata(_one(dist, "*.whl"))
    assert metadata["Version"] == glassllm.__version__
    assert metadata["License-Expression"] == "MIT"
    classifiers = metadata.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert metadata["Requires-Python"] == ">=3.11"
    # No repository exists yet: no field may point at one.
    assert metadata.get_all("Project-URL") is None
    assert metadata["Home-page"] is None and metadata["Download-URL"] is None
    package_json = json.loads((REPO / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    assert "repository" not in package_json and "homepage" not in package_json and "bugs" not in package_json
    assert package_json["version"] == glassllm.__version__


def test_the_test_extra_installs_the_build_backend_the_builds_use():
    """`build --no-isolation` uses the backend of this environment: a fresh one made by the
    README's commands has it only if the test extra names it."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(project["build-system"]["requires"]) <= set(project["project"]["optional-dependencies"]["test"])


def test_version_is_written_once_and_shown_by_both_commands():
    import glassllm_server

    assert glassllm_server.__version__ is glassllm.__version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "glassllm/__init__.py"
    shown = _run(SCRIPTS / "glassllm", "--version")
    assert shown.strip() == f"glassllm {glassllm.__version__}"


def _lsp_message(stream, payload: dict | None = None) -> dict:
    """Write ``payload`` (if any) to a server's stdin and read the next message it sends."""
    if payload is not None:
        body = json.dumps(payload).encode("utf-8")
        stream[0].write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        stream[0].flush()
    length = 0
    while (line := stream[1].readline().strip()) != b"":
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stream[1].read(length))


def test_pipx_install_gives_both_commands_in_a_fresh_environment(tmp_path):
    home, bin_dir = tmp_path / "pipx", tmp_path / "bin"
    env = dict(os.environ, PIPX_HOME=str(home), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(tmp_path / "man"))
    # The commands must come from pipx's environment, not from this one.
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    _run(sys.executable, "-m", "pipx", "install", REPO, env=env)
    assert _run(bin_dir / "glassllm", "--version", env=env).strip() == f"glassllm {glassllm.__version__}"
    assert _run(bin_dir / "glassllm-lsp", "--version", env=env).strip() == f"glassllm-lsp {glassllm.__version__}"
    ids = _run(bin_dir / "glassllm", "encode", "Era uma vez", env=env).split()
    assert [int(i) for i in ids] == glassllm.packaged("pt").encode("Era uma vez")
    assert str(home) in os.path.realpath(bin_dir / "glassllm")

    server = subprocess.Popen([bin_dir / "glassllm-lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert server.stdin is not None and server.stdout is not None
    try:
        stream = (server.stdin, server.stdout)
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        answer = _lsp_message(stream, request)
        assert answer["result"]["serverInfo"] == {"name": "glassllm-lsp", "version": glassllm.__version__}
        _lsp_message(stream, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        body = json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()
        server.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to try its completion")
def test_bash_completion_completes_subcommands_and_options(tmp_path):
    script = tmp_path / "glassllm.bash"
    script.write_text(_run(SCRIPTS / "glassllm", "completion", "bash"), encoding="utf-8")

    def complete(line: str) -> list[str]:
        probe = (
            f"source {script}\n"
            f'COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; read -ra COMP_WORDS <<< "$COMP_LINE"\n'
            f"_python_argcomplete glassllm\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        env = dict(os.environ, PATH=os.pathsep.join([str(SCRIPTS), os.environ["PATH"]]))
        return [word.strip() for word in _run("bash", "-c", probe, env=env).splitlines() if word.strip()]

    assert {"inspect", "compare", "explain", "encode", "completion"} <= set(complete("glassllm "))
    assert complete("glassllm insp") == ["inspect"]
    assert "--html" in complete("glassllm inspect --h")
    assert set(complete("glassllm inspect --lang ")) == {"en", "pt"}
