"""The tree IR: lossless JSON round trip and clear errors for malformed trees."""

import json

import pytest

from mcp_cli.tree import Command, Exclusive, Group, Param, Settings, Topic, Tree

from .conftest import DEMO, FAULTS


def full_tree() -> Tree:
    """A tree using every feature of the IR."""
    cmd = Command(
        "extract",
        summary="Extract text.",
        description="Longer text.\n\nTwo paragraphs.",
        params=[
            Param("pdf", type="path", help="Input."),
            Param("pages", flags=["-p", "--pages"], metavar="RANGE", default="all"),
            Param("dpi", type="integer", flags=["--dpi"], default=150),
            Param("scale", type="number", flags=["--scale"], required=True),
            Param("fmt", flags=["--format"], choices=["plain", "json"], default="plain"),
            Param("tag", flags=["--tag"], action="append"),
            Param("meta", type="json", flags=["--meta"]),
            Param("quiet", type="boolean", flags=["-q"], action="store_true"),
            Param("color", type="boolean", flags=["--color"], action="negatable", default=True),
            Param("verbose", flags=["-v"], action="count"),
            Param("rest", nargs="..."),
            Param("files", type="path", nargs="+"),
        ],
        exclusive=[Exclusive(["quiet", "verbose"], required=False)],
        handler={"kind": "subprocess", "command": ["{python}", "x.py"], "timeout": 5},
        aliases=["x"],
        examples=["pdf text extract a.pdf"],
    )
    raw = Command("raw", passthrough=True, usage="raw [ARGS]", handler={"kind": "python", "target": "m:f"})
    topic = Topic("forms", summary="Forms guide.", text="# Forms\n\nBody.", aliases=["form"])
    inner = Group("deep", summary="Deeper.", children=[raw])
    text = Group("text", summary="Text.", description="About text.", children=[cmd, inner], aliases=["t"])
    root = Group("pdf", summary="PDF toolkit.", children=[text, Group("docs", children=[topic])])
    return Tree(root=root, settings=Settings(budget=600, timeout=3.5, help_budget=900))


def test_round_trip_is_lossless():
    tree = full_tree()
    data = json.loads(tree.to_json())
    again = Tree.from_dict(data)
    assert again == tree
    assert again.to_dict() == data


def test_defaults_are_left_out_of_json():
    data = Tree(Group("x", children=[Command("y", handler={"kind": "python", "target": "m:f"})])).to_dict()
    assert data["root"]["children"][0] == {
        "name": "y",
        "handler": {"kind": "python", "target": "m:f"},
        "kind": "command",
    }
    assert data["settings"] == {}


@pytest.mark.parametrize("path", [DEMO, FAULTS])
def test_bundled_trees_load_and_round_trip(path):
    tree = Tree.load(path)
    assert Tree.from_dict(tree.to_dict()) == tree
    assert tree.base_dir == path.parent


def test_walk_lists_every_path_in_order():
    paths = [" ".join(p) for p, _ in full_tree().walk()]
    assert paths == ["text", "text extract", "text deep", "text deep raw", "docs", "docs forms"]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"format": "other"}, "not an mcp-cli tree"),
        ({"format": "mcp-cli/tree", "version": 99, "root": {}}, "unsupported tree version"),
        ({"format": "mcp-cli/tree", "version": 1, "root": {"kind": "widget", "name": "w"}}, "unknown node kind"),
        ({"format": "mcp-cli/tree", "version": 1, "root": {"kind": "command", "name": "c"}}, "must be a group"),
        (
            {"format": "mcp-cli/tree", "version": 1, "root": {"kind": "group", "name": "g", "colour": 1}},
            "bad group 'g'",
        ),
    ],
)
def test_malformed_trees_are_rejected_with_a_reason(data, message):
    with pytest.raises(ValueError, match=message):
        Tree.from_dict(data)
