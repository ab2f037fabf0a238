"""The MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) for a tree served from a skill folder.

Each file of the skill (what `files.walk` accepts) is a resource `skill://NAME/PATH`: NAME is the frontmatter's
`name`, PATH the file's path in the folder, percent-encoded; the skill's own SKILL.md is `skill://NAME/SKILL.md`.
`resources/list` lists them, `resources/read` reads one (text when it is UTF-8, else base64), `skills/list` and
`skills/get` give the skill's entry (the SKILL.md uri, the frontmatter as written, every file with its sha256
digest) and `resources/directory/read` lists a folder's direct children (`skill://NAME` is the skill's root). A uri
that names no file (or folder) of the skill gets error -32602, Invalid params, as the SEP says. Every request walks
and reads the folder again through `skill_files` (nothing outside it, no devices, bounded sizes), in a worker
thread, so listings and digests follow edits.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ...errors import SourceError
from ...tree import Tree
from . import files as skill_files

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

EXTENSION = "io.modelcontextprotocol/skills"
SKILL_MD = "SKILL.md"
DIRECTORY = "inode/directory"


class UriParams(types.PaginatedRequestParams):
    """The params of `skills/get` and `resources/directory/read` (a cursor is accepted; there is one page)."""

    uri: str


def invalid(message: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message)


class SkillResources:
    """The files of the skill folder `tree.base_dir` as skill resources, and the skill's entry."""

    def __init__(self, tree: Tree) -> None:
        assert tree.skill and tree.base_dir, "not a skill's tree"
        self.folder = Path(tree.base_dir)
        self.frontmatter: dict[str, Any] = tree.skill["frontmatter"]
        self.skill_md: str = tree.skill["file"]  # SKILL.md as the folder spells it
        self.tree_file = tree.file  # a built package's frozen tree, kept in the folder: not a file of the skill
        self.root = "skill://" + quote(str(self.frontmatter["name"]), safe="")
        self.uri = self.uri_of(SKILL_MD)

    def uri_of(self, rel: str) -> str:
        return f"{self.root}/{quote(rel)}" if rel else self.root

    def files(self) -> dict[str, Path]:
        """Every file of the skill by its path in a uri, in walking order. An error -32603 (the server keeps
        serving) when the folder has grown past the limits of a skill."""
        try:
            paths = skill_files.walk(self.folder, [])  # loading the skill warned of what the walk refuses
        except SourceError as exc:
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None
        found = {}
        for path in paths:
            if path != self.tree_file:
                rel = path.relative_to(self.folder).as_posix()
                found[SKILL_MD if rel == self.skill_md else rel] = path
        return found

    def path(self, uri: str) -> str:
        """The path in the skill that `uri` names ("" for the skill's root); Invalid params when it names none."""
        if uri == self.root:
            return ""
        if not uri.startswith(self.root + "/"):
            raise invalid(f"{uri}: not a resource of this server; its skill's files are {self.root}/PATH.")
        rel = unquote(uri[len(self.root) + 1 :])
        if any(part in ("", ".", "..") or "\0" in part for part in rel.split("/")):
            raise invalid(f"{uri}: a skill uri has no empty, `.` or `..` segments; use the uris resources/list gives.")
        return rel

    def resource(self, rel: str, folder: bool = False) -> types.Resource:
        name = rel.rpartition("/")[2]
        if folder:
            return types.Resource(uri=self.uri_of(rel), name=name, mime_type=DIRECTORY)
        if rel == SKILL_MD:
            about = self.frontmatter.get("description")
            description = about if isinstance(about, str) else None
            return types.Resource(
                uri=self.uri, name=str(self.frontmatter["name"]), description=description, mime_type="text/markdown"
            )
        return types.Resource(uri=self.uri_of(rel), name=name, mime_type=mimetypes.guess_type(name)[0])

    def read(self, uri: str) -> types.ReadResourceResult:
        rel = self.path(uri)
        path = self.files().get(rel)
        if path is None:
            raise invalid(f"{uri}: no such file in the skill; resources/list gives its files.")
        try:
            data = skill_files.read_bytes(self.folder, path)
        except skill_files.Refused as exc:
            raise invalid(f"{uri}: {exc}") from None
        mime = self.resource(rel).mime_type
        contents: types.TextResourceContents | types.BlobResourceContents
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            contents = types.BlobResourceContents(uri=uri, mime_type=mime or "application/octet-stream", blob=blob)
        else:
            contents = types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)
        return types.ReadResourceResult(contents=[contents])

    def entry(self) -> dict[str, Any]:
        """The skill's entry for skills/list and skills/get: its SKILL.md uri, frontmatter and files with digests."""
        resources = []
        for rel, path in self.files().items():
            try:
                digest = hashlib.sha256(skill_files.read_bytes(self.folder, path)).hexdigest()
            except skill_files.Refused:  # changed since the walk: it is not a file of the skill now
                continue
            resources.append({"uri": self.uri_of(rel), "digest": f"sha256:{digest}"})
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    def children(self, uri: str) -> list[types.Resource]:
        """The direct children of the folder `uri` names: files, then folders as directory resources."""
        folder = self.path(uri)
        prefix = f"{folder}/" if folder else ""
        found: dict[str, types.Resource] = {}
        for rel in self.files():
            if rel.startswith(prefix):
                head, deeper, _ = rel[len(prefix) :].partition("/")
                found.setdefault(prefix + head, self.resource(prefix + head, folder=bool(deeper)))
        if folder and not found:
            raise invalid(f"{uri}: not a folder of the skill; give {self.root} or a folder in it.")
        return list(found.values())

    def install(self, server: Server) -> None:
        """Serve the resources, the extension's methods, and declare the extension with `directoryRead`. Walking,
        reading and hashing run in a worker thread, so tool calls go on meanwhile."""
        in_thread = anyio.to_thread.run_sync

        async def list_resources(
            ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return types.ListResourcesResult(resources=await in_thread(lambda: list(map(self.resource, self.files()))))

        async def read_resource(
            ctx: ServerRequestContext, params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return await in_thread(lambda: self.read(params.uri))

        async def list_skills(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
            return {"skills": [await in_thread(self.entry)]}

        async def get_skill(ctx: ServerRequestContext, params: UriParams) -> dict[str, Any]:
            if params.uri != self.uri:
                raise invalid(f"{params.uri}: not a skill this server serves; its skill is {self.uri}.")
            return {"skill": await in_thread(self.entry)}

        async def read_directory(ctx: ServerRequestContext, params: UriParams) -> dict[str, Any]:
            resources = await in_thread(lambda: self.children(params.uri))
            return {"resources": [r.model_dump(by_alias=True, mode="json", exclude_none=True) for r in resources]}

        server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
        server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
        server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
        server.add_request_handler("skills/get", UriParams, get_skill)
        server.add_request_handler("resources/directory/read", UriParams, read_directory)
        server.extensions[EXTENSION] = {"directoryRead": True}
