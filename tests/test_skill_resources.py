"""The MCP Skills extension (SEP-2640) through a real MCP client over stdio: a skill's files as `skill://` resources,
`skills/list`, `skills/get` and `resources/directory/read`, every digest checked against the file's bytes; bad
uris refused with -32602 while the server keeps serving; declared only for skills; served by a built package."""

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from .conftest import DEMO, ROOT, budget, inspector, served

pytestmark = pytest.mark.anyio

PDF = ROOT / "skills" / "pdf"
EXTENSION = "io.modelcontextprotocol/skills"
ANY = TypeAdapter(dict[str, Any])


class UriParams(types.RequestParams):
    uri: str | None = None


async def request(client: Any, method: str, **params: Any) -> dict[str, Any]:
    """A request of a method the SDK does not know, through the session's generic `send_request`."""
    return await client.session.send_request(
        types.Request[UriParams, str](method=method, params=UriParams(**params)), ANY
    )


def skill_files(folder: Path) -> dict[str, Path]:
    """The files a skill folder holds, by path (what a build copies: no dot-files, caches or node_modules)."""
    found = {}
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")]
        for name in names:
            path = Path(top) / name
            if not name.startswith(".") and not name.endswith(".pyc") and path.is_file():
                found[path.relative_to(folder).as_posix()] = path
    return found


def frontmatter(skill_md: Path) -> dict[str, Any]:
    """The frontmatter rendered as JSON (a YAML date is its text)."""
    return json.loads(json.dumps(yaml.safe_load(skill_md.read_text(encoding="utf-8").split("---\n")[1]), default=str))


def check_entry(entry: dict[str, Any], name: str, files: dict[str, Path], quote=lambda rel: rel) -> None:
    """A skills/list or skills/get entry: the SKILL.md uri, the frontmatter as written, every file exactly once
    with the sha256 of its bytes."""
    assert entry["uri"] == f"skill://{name}/SKILL.md"
    assert entry["frontmatter"] == frontmatter(files["SKILL.md"])
    digests = {r["uri"]: r["digest"] for r in entry["resources"]}
    assert len(digests) == len(entry["resources"])
    expected = {f"skill://{name}/{quote(rel)}": path for rel, path in files.items()}
    assert digests.keys() == expected.keys()
    for uri, path in expected.items():
        assert digests[uri] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(), uri


async def test_a_skill_serves_its_files_as_skill_resources():
    files = skill_files(PDF)
    async with served("serve", str(PDF)) as client:
        assert client.server_capabilities.extensions[EXTENSION] == {"directoryRead": True}
        listed = (await client.list_resources()).resources
        assert {r.uri for r in listed} == {f"skill://pdf/{rel}" for rel in files}
        skill_md = next(r for r in listed if r.uri == "skill://pdf/SKILL.md")
        assert (skill_md.name, skill_md.mime_type) == ("pdf", "text/markdown")
        assert skill_md.description == frontmatter(PDF / "SKILL.md")["description"]
        for rel in ("SKILL.md", "references/forms.md"):
            contents = (await client.read_resource(f"skill://pdf/{rel}")).contents
            assert contents[0].text == (PDF / rel).read_bytes().decode("utf-8")

        listing = await request(client, "skills/list")
        assert len(listing["skills"]) == 1
        check_entry(listing["skills"][0], "pdf", files)
        got = await request(client, "skills/get", uri="skill://pdf/SKILL.md")
        assert got["skill"] == listing["skills"][0]


async def test_directories_list_their_direct_children():
    async with served("serve", str(PDF)) as client:
        root = (await request(client, "resources/directory/read", uri="skill://pdf"))["resources"]
        folders = [r["uri"] for r in root if r.get("mimeType") == "inode/directory"]
        assert folders == ["skill://pdf/references", "skill://pdf/scripts"]
        assert "skill://pdf/SKILL.md" in [r["uri"] for r in root]
        references = (await request(client, "resources/directory/read", uri="skill://pdf/references"))["resources"]
        names = sorted(p.name for p in (PDF / "references").iterdir() if p.is_file())
        assert [r["name"] for r in references] == names


@pytest.mark.parametrize(
    ("method", "uri"),
    [
        ("resources/read", "skill://pdf/../../etc/passwd"),
        ("resources/read", "skill://pdf/%2e%2e/%2e%2e/etc/passwd"),
        ("resources/read", "skill://pdf/references/missing.md"),
        ("resources/read", "skill://other/SKILL.md"),
        ("skills/get", "skill://other/SKILL.md"),
        ("skills/get", "skill://pdf/references/forms.md"),
        ("resources/directory/read", "skill://pdf/SKILL.md"),
        ("resources/directory/read", "skill://pdf/../.."),
    ],
)
async def test_what_names_no_file_of_the_skill_is_invalid_params_and_the_server_goes_on(method, uri):
    async with served("serve", str(PDF)) as client:
        with pytest.raises(MCPError) as refused:
            await request(client, method, uri=uri)
        assert refused.value.code == types.INVALID_PARAMS and uri in refused.value.message
        assert "root:" not in refused.value.message  # nothing of /etc/passwd
        assert (await client.read_resource("skill://pdf/SKILL.md")).contents[0].text.startswith("---")
        assert (await client.list_tools()).tools[0].name == "pdf"


async def test_a_tree_that_is_not_a_skill_declares_no_extension():
    async with served("serve", str(DEMO)) as client:
        assert EXTENSION not in (client.server_capabilities.extensions or {})
        assert client.server_capabilities.resources is None
        with pytest.raises(MCPError) as refused:
            await request(client, "skills/list")
        assert refused.value.code == types.METHOD_NOT_FOUND


def odd_skill(folder: Path) -> Path:
    """A skill nobody wrote for us: odd file names, a binary file, a nested folder, a symlink out of the folder."""
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: odd\ndescription: Odd files.\nmetadata:\n  version: '2'\n  released: 2026-01-02\n---\n# Odd\n"
    )
    (folder / "notes with spaces #1 %.md").write_text("spaces\n")
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "deep" / "er" / "é.txt").write_text("accent\n", encoding="utf-8")
    (folder / "image.bin").write_bytes(bytes(range(256)))
    (folder / "bom.txt").write_bytes(b"\xef\xbb\xbfwith a BOM\n")
    (folder / "passwd").symlink_to("/etc/passwd")
    return folder


async def test_odd_names_binary_files_and_symlinks_out_of_the_folder(tmp_path):
    skill = odd_skill(tmp_path / "odd")
    files = {rel: path for rel, path in skill_files(skill).items() if rel != "passwd"}
    async with served("serve", str(skill)) as client:
        listing = await request(client, "skills/list")
        check_entry(listing["skills"][0], "odd", files, quote)
        assert listing["skills"][0]["frontmatter"]["metadata"] == {"version": "2", "released": "2026-01-02"}
        for rel, path in files.items():
            content = (await client.read_resource(f"skill://odd/{quote(rel)}")).contents[0]
            data = base64.b64decode(content.blob) if hasattr(content, "blob") else content.text.encode("utf-8")
            assert data == path.read_bytes(), rel
        with pytest.raises(MCPError) as refused:
            await client.read_resource("skill://odd/passwd")
        assert refused.value.code == types.INVALID_PARAMS
        deep = (await request(client, "resources/directory/read", uri="skill://odd/deep"))["resources"]
        assert deep == [{"uri": "skill://odd/deep/er", "name": "er", "mimeType": "inode/directory"}]


async def test_a_built_package_serves_the_skill_it_carries(tmp_path):
    skill = odd_skill(tmp_path / "odd")
    files = {rel: path for rel, path in skill_files(skill).items() if rel != "passwd"}
    out = tmp_path / "odd-mcp"
    built = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=budget(300),
    )
    assert built.returncode == 0, built.stderr
    async with served(str(out / "odd_mcp" / "__main__.py"), command=sys.executable) as client:
        assert client.server_capabilities.extensions[EXTENSION] == {"directoryRead": True}
        check_entry((await request(client, "skills/list"))["skills"][0], "odd", files, quote)
        assert "mcp-cli-tree.json" not in json.dumps((await client.list_resources()).model_dump())


def test_the_inspector_lists_and_reads_skill_resources(tmp_path):
    server = [sys.executable, "-m", "mcp_cli", "serve", str(PDF)]

    def run(*args: str, strict: bool = False) -> dict[str, Any]:
        proc = inspector(server, *args, home=tmp_path, strict=strict)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)

    assert run("--method", "tools/list", strict=True)["tools"][0]["name"] == "pdf"
    assert "skill://pdf/references/forms.md" in [r["uri"] for r in run("--method", "resources/list")["resources"]]
    read = run("--method", "resources/read", "--uri", "skill://pdf/references/forms.md")
    assert read["contents"][0]["text"] == (PDF / "references" / "forms.md").read_text(encoding="utf-8")


def test_a_tree_file_with_a_broken_skill_entry_is_refused_in_one_line(tmp_path):
    tree = json.loads(DEMO.read_text(encoding="utf-8")) | {"skill": {"file": "SKILL.md"}}
    (tmp_path / "tree.json").write_text(json.dumps(tree))
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "serve", str(tmp_path / "tree.json")],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 2 and '"skill" must be' in proc.stderr and "Traceback" not in proc.stderr
