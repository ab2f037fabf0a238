"""The served tool inside real hosts, end to end: the real Claude Code and Codex CLIs (tests/node), each driven by a
scripted model (`scripted_model`) that calls tools, and what each host then sends its model, as recorded: the tool
loaded up front or deferred, its description, and each answer as the model reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from . import host_runs
from .conftest import NODE_BIN, ROOT, budget
from .scripted_model import Model, call, serving

PDF = str(ROOT / "skills" / "pdf")
ENVELOPE = '"ok":'  # what the result envelope, shown as JSON, would put in front of the model


def servers_config(tmp_path: Path) -> Path:
    """A config of three real servers (server-everything, server-filesystem, server-memory), in a file its user
    named."""
    config = tmp_path / "team-tools.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                    "filesystem": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(tmp_path)]},
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
                    },
                }
            }
        )
    )
    return config


# Claude Code


def run_claude(tmp_path: Path, servers: dict[str, Any], script: list[Any], allowed: list[str]) -> Model:
    with serving(script) as model:
        done = host_runs.claude(model.url, tmp_path / "home", servers, "Do the task.", allowed, budget(120))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout)["result"] == "Done."  # the script ran to its end
    return model


def claude_loop(model: Model) -> list[dict[str, Any]]:
    return model.loop("/v1/messages")


def tool_def(request: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((t for t in request["tools"] if t["name"] == name), None)


def deferred(request: dict[str, Any]) -> str:
    """The text of Claude Code's list of deferred tools (names only, loaded through its ToolSearch)."""
    texts = [b.get("text", "") for m in request["messages"] for b in m["content"] if isinstance(b, dict)]
    return next((t for t in texts if "deferred tools" in t), "")


def results(request: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The content of each tool result the model is shown, in order, without the host's own reminders."""
    out = []
    for message in request["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                content = [{"type": "text", "text": content}] if isinstance(content, str) else content
                out.append([_unreminded(c) for c in content if not c.get("text", "").startswith("<system-reminder>")])
    return out


def _unreminded(block: dict[str, Any]) -> dict[str, Any]:
    """A block without the reminder Claude Code appends to a result given as one string."""
    if block["type"] != "text":
        return block
    return {**block, "text": block["text"].split("\n\n<system-reminder>", 1)[0]}


def texts(blocks: list[dict[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in blocks if b["type"] == "text")


def test_claude_code_loads_the_skill_tool_up_front_and_shows_each_answer_once_as_text(tmp_path):
    script = [call("pdf", argv=["--help"]), call("pdf", argv=["text", "--help"]), call("pdf", command="text extract")]
    model = run_claude(tmp_path, {"pdf": host_runs.mcp_cli(PDF)}, script, ["mcp__pdf__pdf"])
    first, last = claude_loop(model)[0], claude_loop(model)[-1]
    tool = tool_def(first, "mcp__pdf__pdf")
    assert tool is not None and "defer_loading" not in tool  # on the first turn, with its description and schema
    assert tool["description"].startswith("Comprehensive PDF toolkit") and "--help" in tool["description"]
    assert set(tool["input_schema"]["properties"]) == {"argv", "command"}
    assert "mcp__pdf__pdf" not in deferred(first)
    shown = results(last)
    assert texts(shown[0]).startswith("pdf - Comprehensive PDF toolkit") and "Domains:" in texts(shown[0])
    assert texts(shown[1]).startswith("pdf text - Extract text content from PDFs.")
    assert "Usage:\n  pdf text extract [options] PDF" in texts(shown[2])  # the error teaches the usage
    for blocks in shown:  # once, as plain text: no JSON envelope, no second copy
        said = texts(blocks)
        assert ENVELOPE not in said and "\\n" not in said and len(blocks) == 1


def test_claude_code_defers_the_tool_without_the_hint(tmp_path):
    """`--no-always-load`: Claude Code lists only the tool's name among its deferred tools, as it does any MCP tool."""
    model = run_claude(tmp_path, {"pdf": host_runs.mcp_cli(PDF, "--no-always-load")}, [], [])
    first = claude_loop(model)[0]
    assert tool_def(first, "mcp__pdf__pdf") is None and "mcp__pdf__pdf" in deferred(first)


def test_claude_code_with_wrapped_servers_shows_images_and_links(tmp_path):
    config = servers_config(tmp_path)
    script = [
        call("team-tools", argv=["everything", "get-tiny-image"]),
        call("team-tools", argv=["everything", "get-resource-links", "--count", "2"]),
        call("team-tools", argv=["memory", "read-graph"]),
    ]
    model = run_claude(tmp_path, {"team": host_runs.mcp_cli(str(config))}, script, ["mcp__team__team-tools"])
    tool = tool_def(claude_loop(model)[0], "mcp__team__team-tools")
    assert tool is not None and "Domains: everything, filesystem, memory." in tool["description"]
    image, links, graph = results(claude_loop(model)[-1])
    (png,) = [b for b in image if b["type"] == "image"]  # an image block the model sees, not a placeholder
    assert png["source"]["media_type"] == "image/png" and ENVELOPE not in texts(image)
    assert "demo://resource/dynamic/" in texts(links) and ENVELOPE not in texts(links)  # the links, as the host shows
    assert json.loads(texts(graph)) == {"entities": [], "relations": []}  # the upstream's own text, once


def test_claude_code_with_the_meta_surface(tmp_path):
    """The meta-tools stay loaded too; their answers keep the envelope (structuredContent), which the host shows."""
    script = [call("search_tools", query="extract text"), call("describe_tools", names=["text extract"])]
    allowed = ["mcp__pdf__search_tools", "mcp__pdf__describe_tools"]
    model = run_claude(tmp_path, {"pdf": host_runs.mcp_cli(PDF, "--surface", "meta")}, script, allowed)
    first = claude_loop(model)[0]
    assert all(tool_def(first, f"mcp__pdf__{n}") for n in ("search_tools", "describe_tools", "call_tool"))
    found, described = (texts(r) for r in results(claude_loop(model)[-1]))
    assert json.loads(found)["ok"] is True and "text extract" in json.loads(found)["output"]
    assert json.loads(json.loads(described)["output"])[0]["name"] == "text extract"  # JSON inside JSON


def test_claude_code_uses_an_exported_skill_through_skill_and_bash(tmp_path):
    home = tmp_path / "home"
    folder = home / ".claude" / "skills" / "pdf-tools"
    subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", PDF, "-o", str(folder)],
        check=True,
        cwd=ROOT,
        capture_output=True,
        env=host_runs._env(home),
        timeout=budget(60),
    )
    script = [
        call("Skill", skill="pdf-tools"),
        call("Bash", command=f"{folder}/scripts/pdf-tools.sh text --help", description="pdf text help"),
    ]
    model = run_claude(tmp_path, {}, script, ["Skill", "Bash"])
    first, last = claude_loop(model)[0], claude_loop(model)[-1]
    listing = json.dumps(first["messages"])
    assert "pdf-tools" in listing and "Comprehensive PDF toolkit" in listing  # listed with its description
    everything = json.dumps(last["messages"])
    assert "scripts/pdf-tools.sh --help" in everything  # the SKILL.md body, read when the skill was picked
    assert "pdf-tools.sh text - Extract text content from PDFs." in texts(results(last)[-1])  # help names the script


# Codex


def run_codex(tmp_path: Path, servers: dict[str, Any], script: list[Any]) -> Model:
    with serving(script) as model:
        done = host_runs.codex(model.url, tmp_path / "home", servers, "Do the task.", budget(120))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return model


def codex_outputs(request: dict[str, Any]) -> list[Any]:
    """What the model is shown of each function call's output, in order."""
    return [i["output"] for i in request["input"] if isinstance(i, dict) and i.get("type") == "function_call_output"]


def codex_text(output: Any) -> str:
    return output if isinstance(output, str) else "".join(o.get("text", "") for o in output)


def test_codex_offers_the_skill_tool_and_shows_each_answer_as_text(tmp_path):
    script = [call("mcp__pdf__pdf", argv=["--help"]), call("mcp__pdf__pdf", command="text extract")]
    model = run_codex(tmp_path, {"pdf": host_runs.mcp_cli(PDF)}, script)
    first, last = model.loop("/v1/responses")[0], model.loop("/v1/responses")[-1]
    (space,) = [t for t in first["tools"] if t.get("name") == "mcp__pdf"]
    (tool,) = space["tools"]
    assert tool["name"] == "pdf" and tool["description"].startswith("Comprehensive PDF toolkit")
    assert space["description"].startswith("Comprehensive PDF toolkit")  # the server's instructions
    helped, failed = (codex_text(o) for o in codex_outputs(last))
    assert "pdf - Comprehensive PDF toolkit" in helped and helped.count("Domains:") == 1
    assert "Usage:" in failed and ENVELOPE not in helped + failed


def test_codex_with_wrapped_servers_shows_images(tmp_path):
    config = servers_config(tmp_path)
    script = [
        call("mcp__team__team_tools", argv=["everything", "get-tiny-image"]),  # Codex: `-` as `_`
        call("mcp__team__team_tools", argv=["memory", "read-graph"]),
    ]
    model = run_codex(tmp_path, {"team": host_runs.mcp_cli(str(config))}, script)
    image, graph = codex_outputs(model.loop("/v1/responses")[-1])
    assert any(o.get("type") == "input_image" for o in image), image
    assert '"entities": []' in codex_text(graph) and ENVELOPE not in codex_text(graph)


def test_codex_shows_only_the_envelope_when_structured_content_is_sent(tmp_path):
    """Why the one tool sends text alone: given structuredContent, Codex (as Claude Code) shows the model only that
    JSON, the text's newlines escaped inside it."""
    model = run_codex(tmp_path, {"pdf": host_runs.mcp_cli(PDF, "--structured")}, [call("mcp__pdf__pdf", argv=["text"])])
    (shown,) = (codex_text(o) for o in codex_outputs(model.loop("/v1/responses")[-1]))
    assert '{"ok":true,"command":"pdf text","output":"pdf text - Extract' in shown and "\\n\\nUsage:" in shown


@pytest.fixture(autouse=True)
def _hosts_installed():
    missing = [p.name for p in (host_runs.CLAUDE, host_runs.CODEX) if not p.exists()]
    assert not missing, f"{missing} not installed: run `npm ci --prefix tests/node`"
