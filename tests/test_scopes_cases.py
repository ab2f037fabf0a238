"""Scopes in-process (`scopes.py`): every way a scopes file is refused, what a good one gives, and the part of a tree
each pattern leaves a scope (`prune`), read-only included; the end-to-end tests are in test_scopes.py."""

import dataclasses
import hashlib
import logging

import pytest

from mcp_cli.engine.runtime import Runtime
from mcp_cli.errors import Unsafe
from mcp_cli.surfaces.scopes import ACCESS, Scope, View, load, prune, runtime_for, views
from mcp_cli.tree import Command, Group, Topic, Tree

ENV = {"A_TOKEN": "  token a \n", "B_TOKEN": "token b", "BLANK": "   "}
HASH = hashlib.sha256(b"token b").hexdigest()
GOOD = '[[scope]]\ntoken_env = "A_TOKEN"\npaths = ["x"]\n'
SAME = f'[[scope]]\nname = "b"\ntoken_sha256 = "{hashlib.sha256(b"token a").hexdigest()}"\npaths = ["y"]\n'


def refusal(tmp_path, text: str) -> str:
    file = tmp_path / "scopes.toml"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(Unsafe) as err:
        load(file, ENV)
    message = str(err.value)
    assert message.startswith(f"--scopes {file}: ") and "\n" not in message
    return message.removeprefix(f"--scopes {file}: ")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('title = "x"\n' + GOOD, "unknown key 'title'; the file holds [[scope]] tables only"),
        ("", "no [[scope]] tables;"),
        ("scope = 3\n", "no [[scope]] tables;"),
        ("scope = []\n", "no [[scope]] tables;"),
        ("scope = [1]\n", "scope 1: must be a table ([[scope]])"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\npath = ["x"]\n', "scope 1: unknown key 'path'; did you mean 'paths'?"),
        (
            GOOD + "colour = 1\n",
            "scope 1: unknown key 'colour'; the keys are name, token_env, token_sha256, paths, read_only",
        ),
        (
            '[[scope]]\nname = "  "\ntoken_env = "A_TOKEN"\npaths = ["x"]\n',
            "scope 1: `name` must be a non-empty string",
        ),
        ('[[scope]]\nname = 7\ntoken_env = "A_TOKEN"\npaths = ["x"]\n', "scope 1: `name` must be a non-empty string"),
        (
            f'[[scope]]\nname = "t"\ntoken_env = "A_TOKEN"\ntoken_sha256 = "{HASH}"\npaths = ["x"]\n',
            "scope 1 (t): give the token as exactly one of",
        ),
        ('[[scope]]\npaths = ["x"]\n', "scope 1: give the token as exactly one of"),
        (
            '[[scope]]\ntoken_env = "UNSET"\npaths = ["x"]\n',
            "scope 1: token_env 'UNSET': the environment variable is not set (or empty)",
        ),
        ('[[scope]]\ntoken_env = "BLANK"\npaths = ["x"]\n', "token_env 'BLANK': the environment variable is not set"),
        ('[[scope]]\ntoken_env = 5\npaths = ["x"]\n', "token_env 5: the environment variable is not set"),
        (f'[[scope]]\ntoken_sha256 = "{HASH}0"\npaths = ["x"]\n', "scope 1: token_sha256 must be 64 hex digits"),
        (f'[[scope]]\ntoken_sha256 = "{HASH[1:]}"\npaths = ["x"]\n', "token_sha256 must be 64 hex digits"),
        (f'[[scope]]\ntoken_sha256 = "{"g" * 64}"\npaths = ["x"]\n', "token_sha256 must be 64 hex digits"),
        ('[[scope]]\ntoken_sha256 = 12\npaths = ["x"]\n', "token_sha256 must be 64 hex digits"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\n', "scope 1: `paths` must be a non-empty list of patterns"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\npaths = []\n', "`paths` must be a non-empty list"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\npaths = "x"\n', "`paths` must be a non-empty list"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\npaths = ["x", " "]\n', "`paths` must be a non-empty list"),
        ('[[scope]]\ntoken_env = "A_TOKEN"\npaths = ["x", 1]\n', "`paths` must be a non-empty list"),
        (GOOD + "read_only = 1\n", "scope 1: `read_only` must be true or false"),
        (GOOD + 'read_only = "yes"\n', "`read_only` must be true or false"),
        (GOOD + '[[scope]]\ntoken_env = "B_TOKEN"\npaths = []\n', "scope 2: `paths` must be"),
        (GOOD + SAME, "scopes 'scope 1' and 'b' have the same token; give each its own"),
        ("[[scope]\n", "not a TOML file"),
    ],
)
def test_a_broken_scopes_file_is_refused_saying_what_to_change(tmp_path, text, says):
    assert says in refusal(tmp_path, text)


def test_a_file_that_cannot_be_read_or_decoded(tmp_path):
    with pytest.raises(Unsafe, match=r": cannot read it \(No such file or directory\)$"):
        load(tmp_path / "missing.toml", ENV)
    (tmp_path / "latin.toml").write_bytes(b'[[scope]]\nname = "caf\xe9"\n')
    with pytest.raises(Unsafe, match=r"latin.toml: not a TOML file \("):
        load(tmp_path / "latin.toml", ENV)


def test_a_good_file_gives_each_scope_its_token_s_digest_and_patterns(tmp_path):
    file = tmp_path / "scopes.toml"
    first = '[[scope]]\ntoken_env = "A_TOKEN"\npaths = ["  gh   issues *  ", "jira"]\n'
    file.write_text(
        first + f'[[scope]]\nname = "bee"\ntoken_sha256 = "{HASH.upper()}"\npaths = ["*"]\nread_only = true\n'
    )
    scopes = load(file, ENV)
    with pytest.raises(dataclasses.FrozenInstanceError):
        scopes[0].read_only = True
    assert scopes == [
        Scope("scope 1", hashlib.sha256(b"token a").digest(), ("gh issues *", "jira"), False),  # the token stripped
        Scope("bee", hashlib.sha256(b"token b").digest(), ("*",), True),
    ]


NOOP = {"kind": "python", "target": "builtins:print"}


def tool(name: str, read_only: bool | None = None, server: str = "") -> Command:
    hints = {} if read_only is None else {"readOnlyHint": read_only}
    handler = {"kind": "mcp", "server": server, "tool": name} if server else NOOP
    return Command(name, summary=f"{name}.", handler=handler, annotations=hints)


def sample() -> Tree:
    return Tree(
        Group(
            "t",
            summary="All of it.",
            children=[
                Group(
                    "gh",
                    summary="GitHub.",
                    aliases=["github"],
                    children=[
                        tool("list-issues", True, "github"),
                        tool("create-issue", False, "github"),
                        Group("pulls", children=[tool("get", True, "github"), tool("merge", False, "github")]),
                    ],
                ),
                Group(
                    "jira", summary="Jira.", children=[tool("find", True), Topic("jql", summary="The query language.")]
                ),
                Group("later", summary="Not answering yet."),
                Group("wide", children=[tool(f"c{i}") for i in range(8)]),
                Command("search", handler={"kind": "search"}),
                Group("deep", children=[Command("search", handler={"kind": "search"})]),
            ],
        )
    )


def seen(patterns, read_only=False) -> list[str]:
    return [" ".join(path) for path, _ in prune(sample(), patterns, read_only).walk()]


@pytest.mark.parametrize(
    ("patterns", "read_only", "expected"),
    [
        ([], False, ["search"]),  # the root's `search` is every scope's; one in a group is not
        (
            ["gh *"],
            False,
            ["gh", "gh list-issues", "gh create-issue", "gh pulls", "gh pulls get", "gh pulls merge", "search"],
        ),
        (["gh pulls"], False, ["gh", "gh pulls", "gh pulls get", "gh pulls merge", "search"]),  # a group: all of it
        (["gh pulls g*"], False, ["gh", "gh pulls", "gh pulls get", "search"]),
        (["* get", "jira find"], False, ["gh", "gh pulls", "gh pulls get", "jira", "jira find", "search"]),
        (["GH *"], False, ["search"]),  # case counts
        (["github list-issues"], False, ["gh", "gh list-issues", "search"]),  # a server by its config key
        (["later *"], False, ["later", "search"]),  # an empty group stays for what may come into it
        (["later"], False, ["later", "search"]),
        (["later ?"], False, ["later", "search"]),  # a one-letter command may come into it
        (["deep search"], False, ["search", "deep", "deep search"]),
        (
            ["*"],
            True,
            ["gh", "gh list-issues", "gh pulls", "gh pulls get", "jira", "jira find", "jira jql", "later", "search"],
        ),  # read-only: commands whose hint says so (a topic is read anyway)
        (
            ["gh *", "jira"],
            True,
            ["gh", "gh list-issues", "gh pulls", "gh pulls get", "jira", "jira find", "jira jql", "search"],
        ),
    ],
)
def test_a_scope_sees_the_paths_its_patterns_cover(patterns, read_only, expected):
    assert seen(patterns, read_only) == expected


def test_groups_that_lost_children_are_summarised_by_what_they_keep():
    tree = sample()
    part = prune(tree, ["gh list-issues", "gh pulls *", "jira *", "wide c[0-6]"])
    assert part.root.summary == part.root.description == ""  # the root lost some: its summary could name them
    gh, jira, wide = (part.root.child(name) for name in ("gh", "jira", "wide"))
    assert (gh.summary, gh.description) == ("list-issues, pulls.", "")
    assert wide.summary == "c0, c1, c2, c3, c4, c5 and 1 more."
    assert jira is tree.root.child("jira") and gh.child("pulls") is tree.root.child("gh").child("pulls")  # whole
    assert prune(tree, ["*"]).root is tree.root
    tree.rediscover = object()
    assert prune(tree, ["*"]).rediscover is None  # a part is made again from the whole, not rediscovered


@pytest.mark.anyio
async def test_a_view_is_made_once_per_serving_tree_and_a_request_gets_its_scope_s():
    serving = Runtime(sample())
    view = View(Scope("s", b"d", ("gh pulls *",)), serving)
    first = view.runtime
    assert view.runtime is first
    assert [" ".join(p) for p, _ in first.tree.walk()] == ["gh", "gh pulls", "gh pulls get", "gh pulls merge", "search"]
    assert runtime_for(None, serving) is serving and runtime_for({}, serving) is serving
    assert runtime_for({ACCESS: view}, serving) is first
    serving.adopt(sample())
    assert view.runtime is not first
    read_only = View(Scope("r", b"e", ("gh *",), read_only=True), serving)
    assert "create-issue" not in (await read_only.runtime.call(["gh", "--help"])).output


def test_views_warn_of_patterns_that_match_nothing(caplog):
    scopes = [Scope("one", b"1", ("gh *", "ghh *")), Scope("two", b"2", ("t jira",))]
    with caplog.at_level(logging.WARNING, logger="mcp_cli"):
        made = views(scopes, Runtime(sample()))
    assert sorted(made) == [b"1", b"2"] and made[b"2"].scope is scopes[1]
    assert [r.getMessage() for r in caplog.records] == [
        "scope 'one': 'ghh *' matches no path of t (yet)",
        "scope 'two': 't jira' matches no path of t (yet) (patterns leave out the tool's name, t)",
    ]
