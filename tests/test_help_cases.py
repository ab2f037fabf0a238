"""Help text in-process (`help.py`): each listing's layout by what a group holds, the size budget's thresholds,
usage lines and their wrapping, what an option's notes say, a topic's pages, and the root's "In context" line."""

import pytest

from mcp_cli.engine import help as h
from mcp_cli.engine import markdown
from mcp_cli.testing import invoke
from mcp_cli.text import WIDTH
from mcp_cli.text import rows as text_rows
from mcp_cli.tree import Command, Exclusive, Group, Param, Topic, Tree

NOOP = {"kind": "python", "target": "builtins:print"}


def cmd(name: str = "go", summary: str = "", **fields) -> Command:
    return Command(name, summary=summary, handler=NOOP, **fields)


def opt(name: str, **fields) -> Param:
    return Param(name, flags=fields.pop("flags", [f"--{name}"]), **fields)


GROUPS = [Group("a", summary="A things."), Group("b", summary="B things.")]
COMMANDS = [cmd("x", "Does x."), cmd("y", "Does y.")]
TOPICS = [Topic("guide", summary="A guide.")]


@pytest.mark.parametrize(
    ("children", "root", "usage", "last"),
    [
        (GROUPS, True, "t <domain> <command> [options]", "Run `t <domain> --help` for domain help."),
        (GROUPS, False, "t <group> <command> [options]", "  b  B things."),  # only the root says where to go
        (GROUPS + COMMANDS, True, "t <domain> <command> [options]", "Run `t <name> --help` for more."),
        (GROUPS + TOPICS, True, "t <domain> <command> [options]", "Run `t <name> --help` for more."),
        (COMMANDS, True, "t <command> [options]", "Run `t <command> --help` for command help."),
        (TOPICS, True, "t <topic>", "Run `t <topic>` to read one."),
        (COMMANDS + TOPICS, True, "t <name> ...", "Run `t <name> --help` for more."),
        ([], True, "t <name> ...", "Run `t <name> --help` for more."),
        ([], False, "t <name> ...", "(nothing here yet)"),
    ],
)
def test_a_group_s_usage_and_pointer_follow_what_it_holds(children, root, usage, last):
    out = h.group_help("t", Group("t", children=children), root, 10**6)
    lines = out.splitlines()
    assert lines[:4] == ["t", "", "Usage:", f"  {usage}"] and lines[-1] == last and out.endswith(f"{last}\n")
    assert ("(nothing here yet)" in out) is (not children)
    headings = [line for line in lines if line.endswith(":") and not line.startswith(" ") and line != "Usage:"]
    kinds = [("Domains:" if root else "Groups:", Group), ("Commands:", Command), ("Topics:", Topic)]
    assert headings == [heading for heading, kind in kinds if any(isinstance(c, kind) for c in children)]


def test_a_full_listing_has_a_row_per_child_and_a_blank_line_between_sections():
    out = h.group_help("t", Group("t", summary="Tools.", children=GROUPS + COMMANDS + TOPICS), True, 10**6)
    assert out == (
        "t - Tools.\n\nUsage:\n  t <domain> <command> [options]\n\nDomains:\n  a  A things.\n  b  B things.\n\n"
        "Commands:\n  x  Does x.\n  y  Does y.\n\nTopics:\n  guide  A guide.\n\n"
        "Pipe with |: jq, head, tail, each, save (`each --help`); run several with ; or &&.\n"
        "Run `t <name> --help` for more.\n"
    )


@pytest.mark.parametrize(
    ("summary", "titled"),
    [
        ("", False),
        ("X, y.", False),  # it only names the children: the listing does
        ("x, , Y", False),
        ("x.", False),
        ("X, y, z.", True),  # it names more than the children
        ("XX, y.", True),
        ("Does things.", True),
    ],
)
def test_a_title_that_only_names_the_children_is_left_out(summary, titled):
    out = h.group_help("t", Group("t", summary=summary, children=COMMANDS), False, 10**6)
    assert out.splitlines()[0] == (f"t - {summary}" if titled else "t")


def test_a_group_s_description_shows_its_first_paragraph_after_the_summary_s_sentence():
    group = Group("t", summary="Tools.", description="Tools. The rest of it.\n\nA second paragraph.", children=COMMANDS)
    lines = h.group_help("t", group, False, 10**6).splitlines()
    assert lines[:6] == ["t - Tools.", "", "Usage:", "  t <command> [options]", "", "The rest of it."]
    assert lines[6] == "" and "A second paragraph." not in lines


@pytest.mark.parametrize(
    ("summary", "text", "expected"),
    [
        ("Do x.", "Do x. More.", ("Do x.", "More.")),
        ("Do x across lines.", "Do x\nacross   lines. More\nhere.", ("Do x across lines.", "More\nhere.")),
        (
            "List the issues of a...",
            "List the issues of a repository. Then.",
            ("List the issues of a repository.", "Then."),
        ),
        ("List the issues...", "List all issues. Then.", ("List the issues...", "List all issues. Then.")),
        ("Other.", "Do x. More.", ("Other.", "Do x. More.")),
        ("Do x", "Do x\n\nMore here.", ("Do x", "More here.")),  # the first sentence ends with its paragraph
        ("List the iss...", "List the isolated ones. Then.", ("List the iss...", "List the isolated ones. Then.")),
        ("w" * 195 + " zz more", "", ("w" * 195 + "...", "")),  # cut after a word, at most 197 characters
        ("Do x.", "Do x.", ("Do x.", "")),
        ("", "Do x.", ("", "Do x.")),
        ("Do x.", "", ("Do x.", "")),
        ("word " * 60, "", (("word " * 39).strip() + "...", "")),  # a summary is cut at 200 characters
    ],
)
def test_what_a_help_says_first_and_what_it_says_after(summary, text, expected):
    assert h.lead(cmd(summary=summary), text) == expected


def test_a_listing_gives_up_what_tells_least_first():
    """Usage lines (after the row's name) under rows; then each command's usage line as its row (summaries go
    first); then rows whose summaries are cut shorter and shorter; last, names only."""
    ways = [way() for way in h._listings("Commands", SMALL, True)]
    assert ways[0] == ["Commands:", "  get  Gets.", "    --id INT", "  put  Puts.", "    [--v TEXT]"]
    assert ways[1] == ["Commands:", "  get --id INT", "  put [--v TEXT]"]
    assert ways[2] == ["Commands:", "  get  Gets.", "  put  Puts."]
    assert ways[-1] == ["Commands (2, summaries left out to fit):", "  get, put"]
    assert [len(w) for w in ways] == [5, 3, 3, 3, 3, 3, 3, 3, 2]
    long = [cmd("x", "A summary that goes on and on about what the command does, well past forty characters.")]
    cut = [way()[1] for way in h._listings("Commands", long)]
    assert [len(row) for row in cut[:6]] == sorted((len(row) for row in cut[:6]), reverse=True)
    assert cut[5].endswith("...") and len(cut[5]) <= len("  x  ") + h.SHORTEST
    assert [way() for way in h._listings("Topics", TOPICS)][0] == ["Topics:", "  guide  A guide."]  # no usage lines


SMALL = [
    cmd("get", "Gets.", params=[Param("id", flags=["--id"], type="integer", required=True)]),
    cmd("put", "Puts.", params=[Param("v", flags=["--v"])]),
]


@pytest.mark.parametrize(
    ("children", "root"),
    [
        (SMALL, False),
        (SMALL + [cmd(f"c{i}", "x" * 60) for i in range(20)], False),
        (SMALL, True),
        (SMALL + TOPICS, False),
    ],
)
def test_every_listing_shows_its_commands_usage_lines_under_their_rows_while_they_fit(children, root):
    out = h.group_help("t g", Group("g", children=children), root, 10**6)
    assert "  get  Gets.\n    --id INT\n  put  Puts.\n    [--v TEXT]\n" in out


def test_a_group_over_its_budget_gives_up_summaries_before_usage_lines():
    whole = h.group_help("t", Group("t", children=SMALL), False, 10**6)
    assert h.group_help("t", Group("t", children=SMALL), False, len(whole)) == whole  # just fits: all kept
    out = h.group_help("t", Group("t", children=SMALL), False, len(whole) - 1)
    assert "Commands:\n  get --id INT\n  put [--v TEXT]\n" in out and "Gets." not in out
    assert "--id" not in h.group_help("t", Group("t", children=SMALL), False, 60)  # then summaries, shorter, names


def test_a_group_s_help_ends_with_its_last_line_whole():
    out = h.group_help("t", Group("t", children=[cmd("a", "Runs on OS X")]), False, 10**6)
    assert out.endswith("  a  Runs on OS X\n")  # a command that takes nothing has no usage line under it
    out = h.group_help("t", Group("t", children=[Topic("b", summary="About OS X")]), False, 10**6)
    assert out.endswith("Topics:\n  b  About OS X\n")


def test_a_group_is_split_when_its_usage_lines_overflow_its_listing():
    many = [cmd(f"command-{i}", params=[opt("name", required=True)]) for i in range(60)]
    assert h.callable_within(many[:10], 1_000)
    assert not h.callable_within(many, 1_000)


def listing_lines(out: str) -> list[str]:
    """The lines of a group help's listings (headings and rows; not the blank lines between them)."""
    start = next(
        i for i, line in enumerate(out.splitlines()) if line in ("Domains:", "Groups:", "Commands:", "Topics:")
    )
    return [line for line in out.splitlines()[start:] if line and not line.startswith("Run `")]


def test_the_budget_keeps_summaries_while_the_listings_fit_it_and_the_largest_gives_them_up_first():
    group = Group("t", children=[cmd(f"command-{i}", f"Does thing {i}.") for i in range(12)] + TOPICS)
    full = h.group_help("t", group, True, 10**6)
    header = full[: full.index("Commands:")]
    fits = len(header) + sum(len(line) + 1 for line in listing_lines(full))  # the listings' rows count, not gaps
    assert h.group_help("t", group, True, fits) == full
    tight = h.group_help("t", group, True, fits - 1)
    assert "Commands:\n  command-0\n  command-1\n" in tight and "Does thing" not in tight  # usage lines kept
    assert "Topics:\n  guide  A guide.\n" in tight  # the smaller listing kept its summaries
    bare = h.group_help("t", group, True, 0)
    assert "Topics (1, summaries left out to fit):\n  guide\n" in bare and "A guide" not in bare
    assert all(f"command-{i}" in bare for i in range(12))


FEWER_ROWS = [("n", "TT"), ("o", "T"), ("p", "TTT"), ("q", "TTT"), ("r", "T"), ("s", "T")]
SHORTER = [(f"c{i}cccccc", "S" * k) for i, k in enumerate([4, 8, 5])]


@pytest.mark.parametrize(
    ("groups", "topics", "cut"),
    [
        ([("aa", "S" * 29), ("b", "S" * 5)], FEWER_ROWS, "Groups"),  # 56 characters with newlines, 55
        (SHORTER, [("t0", "S" * 5), ("t1", "S" * 5), ("t2ttttt", "S"), ("t3tt", "S")], "Topics"),  # 64, 68
    ],
)
def test_the_listing_of_more_characters_gives_up_its_summaries_first(groups, topics, cut):
    children = [Group(n, summary=summary) for n, summary in groups] + [
        Topic(n, summary=summary) for n, summary in topics
    ]
    full = h.group_help("t", Group("t", children=children), False, 10**6)
    parts = {p.split(":", 1)[0]: p for p in full.split("\n\n") if p.startswith(("Groups:", "Topics:"))}
    header = full[: full.index("Groups:")]
    fits = len(header) + sum(len(line) + 1 for line in listing_lines(full))  # the listings' rows count, not gaps
    out = h.group_help("t", Group("t", children=children), False, fits - 1)
    kept = "Topics" if cut == "Groups" else "Groups"
    assert parts[kept] in out and parts[cut] not in out and len(out) < len(full)


@pytest.mark.parametrize("size", [6, 8, 9])
def test_names_without_summaries_fill_rows_up_to_the_width(size):
    names = [f"n{i:0{size - 1}d}" for i in range(40)]
    lines = h.group_help("t", Group("t", children=[cmd(n, "S.") for n in names]), True, 0).splitlines()
    rows = lines[lines.index("Commands (40, summaries left out to fit):") + 1 : -3]  # a blank line, then two lines
    assert [n for row in rows for n in row.strip().split(", ")] == names and all(r.startswith("  n") for r in rows)
    per_row = (WIDTH - 2 - size) // (size + 2) + 1  # a row holds what fits in WIDTH, up to WIDTH itself
    assert [len(row.split(", ")) for row in rows[:-1]] == [per_row] * (len(rows) - 1)
    assert max(len(row) for row in rows) <= WIDTH


def test_a_listing_row_s_summary_is_one_line_of_at_most_70_characters():
    long = cmd("x", "A summary that goes on and on about what the command does, well past the width of a row.")
    row = h.group_help("t", Group("t", children=[long]), True, 10**6).splitlines()[6]
    assert row == "  x  A summary that goes on and on about what the command does, well..."  # 71 would keep "past"
    rows = text_rows(
        [("n" * 27, long.summary), ("b", long.summary)]
    )  # names past 26 characters do not widen the column
    assert rows[1].startswith("  b" + " " * 25 + "  A summary") and rows[0].startswith("  " + "n" * 27 + "  A summary")


def test_the_root_says_options_may_come_as_json_when_a_command_anywhere_takes_it():
    deep = Group("a", children=[Group("b", children=[cmd("c", params=[opt("@json", flags=["--json"])])])])
    said = "Run `t <domain> --help` for domain help. Options may also come as one `--json` object (or @FILE).\n"
    assert h.group_help("t", Group("t", children=[Group("z"), deep]), True, 10**6).endswith(said)
    plain = Group("a", children=[Group("b", children=[cmd("c", params=[opt("json")])])])
    assert h.group_help("t", Group("t", children=[plain]), True, 10**6).endswith("for domain help.\n")


@pytest.mark.parametrize(
    ("param", "metavar", "form"),
    [
        (opt("out", type="path"), "PATH", "--out PATH"),
        (opt("n", type="integer", metavar="N"), "N", "--n N"),
        (opt("mode", choices=["a", "b"]), "{a,b}", "--mode {a,b}"),
        (opt("mode", choices=["x" * 19, "y" * 20]), "{" + "x" * 19 + "," + "y" * 20 + "}", None),  # 40 characters
        (opt("mode", choices=["x" * 20, "y" * 20]), "CHOICE", "--mode CHOICE"),
        (opt("n", type="number", nargs="+"), "NUM", "--n NUM [NUM ...]"),
        (opt("n", nargs="*"), "TEXT", "--n [TEXT ...]"),
        (opt("n", nargs="?"), "TEXT", "--n [TEXT]"),
        (opt("n", nargs=3, type="integer"), "INT", "--n INT INT INT"),
        (opt("v", flags=["-v", "--verbose"], action="store_true"), "TEXT", "--verbose"),
        (opt("c", flags=["-c", "--color"], action="negatable"), "TEXT", "--color/--no-color"),
        (opt("x", flags=["--Xml"], action="negatable"), "TEXT", "--Xml/--no-Xml"),
        (Param("my-file"), "MY_FILE", "[MY_FILE]"),
        (Param("my-file", required=True), "MY_FILE", "MY_FILE"),
        (Param("files", nargs="*"), "FILES", "[FILES ...]"),
        (Param("rest", nargs="..."), "REST", "..."),
    ],
)
def test_how_a_parameter_is_written(param, metavar, form):
    assert h.metavar(param) == metavar
    if form:
        assert h._invocation(param) == form


def test_every_spelling_of_a_flag_in_the_options_list():
    assert h._invocation(opt("o", flags=["-o", "--out"]), long_only=False) == "-o, --out TEXT"
    assert h._invocation(opt("c", flags=["-c", "--color"], action="negatable"), long_only=False) == (
        "-c/--no-c | --color/--no-color"
    )
    assert h._invocation(opt("v", flags=["-v", "--verbose"], action="count"), long_only=False) == "-v, --verbose"
    assert h._invocation(opt("f", flags=["--full-path", "--fullPath"]), long_only=False) == "--full-path TEXT"


@pytest.mark.parametrize(
    ("params", "exclusive", "usage"),
    [
        ([], [], "  t go"),
        ([opt("a")], [], "  t go [options]"),
        ([opt("a", required=True)], [], "  t go --a TEXT"),
        (
            [opt("a"), opt("b"), opt("c")],
            [Exclusive(["a", "b"], required=True)],
            "  t go (--a TEXT | --b TEXT) [options]",
        ),
        ([opt("a"), opt("b")], [Exclusive(["a", "b", "gone"])], "  t go [--a TEXT | --b TEXT]"),
        (
            [opt("a"), opt("b"), opt("c", required=True)],
            [Exclusive(["a", "b"])],
            "  t go [--a TEXT | --b TEXT] --c TEXT",
        ),
        ([Param("src"), opt("a", required=True), opt("@json", flags=["--json"])], [], "  t go --a TEXT [SRC]"),
    ],
)
def test_usage_names_required_and_exclusive_options_then_the_rest_then_positionals(params, exclusive, usage):
    assert h.usage("t go", cmd(params=params, exclusive=exclusive)) == usage


def test_a_passthrough_command_s_usage_takes_any_arguments():
    assert h.usage("t go", cmd(passthrough=True, params=[opt("a", required=True)])) == "  t go [ARGS ...]"


def test_usage_wraps_at_the_width_under_the_first_piece():
    prog = "t cmd-1234"  # "  t cmd-1234" is 12 characters, and each piece 1 + 10 more: 8 make a line of WIDTH
    pieces = [f"--o{i:02d} NNNN" for i in range(20)]
    lines = h.usage(prog, cmd(params=[opt(f"o{i:02d}", required=True, metavar="NNNN") for i in range(20)])).splitlines()
    assert lines == [
        "  t cmd-1234 " + " ".join(pieces[:8]),
        " " * 12 + " " + " ".join(pieces[8:16]),
        " " * 12 + " " + " ".join(pieces[16:]),
    ]
    assert len(lines[0]) == len(lines[1]) == WIDTH
    longer = h.usage("t cmd-12345", cmd(params=[opt(f"o{i:02d}", required=True, metavar="NNNN") for i in range(9)]))
    assert longer.splitlines() == ["  t cmd-12345 " + " ".join(pieces[:7]), " " * 13 + " " + " ".join(pieces[7:9])]
    huge = h.usage("t go", cmd(params=[opt("x" * 120, required=True)]))
    assert huge == f"  t go --{'x' * 120} TEXT"  # the first piece stays on the first line however long


@pytest.mark.parametrize(
    ("param", "notes"),
    [
        (opt("n", type="integer", metavar="N", default=5), "(integer; default: 5)"),
        (opt("n", type="integer", default=0), "(default: 0)"),
        (opt("s", metavar="S", default="x"), "(default: x)"),  # a string's type goes without saying
        (opt("m", choices=["a", "b"], metavar="M"), "(one of: a, b)"),
        (opt("m", choices=["x" * 20, "y" * 20]), f"(one of: {'x' * 20}, {'y' * 20})"),
        (opt("m", choices=["a", "b"]), ""),  # {a,b} says it already
        (opt("t", action="append"), "(repeatable)"),
        (opt("v", action="count"), "(repeatable, counts)"),
        (opt("k", action="store_false", default=True), ""),
        (opt("k", action="store_true", default=False), ""),
        (opt("d", default=[]), ""),
        (opt("d", default={}), ""),
        (opt("d", default=""), ""),
        (opt("d", default=3, help="Days (default 3)."), ""),  # the help says it
        (opt("a"), "(not with --b-b, --cc)"),
    ],
)
def test_an_option_s_notes(param, notes):
    other = [opt("b", flags=["--b-b", "--bB"]), opt("c", flags=["-c", "--cc"])]
    assert h._notes(param, cmd(params=[param, *other], exclusive=[Exclusive(["a", "b", "c"])])) == notes


def full_command() -> Command:
    params = [
        opt("out", flags=["-o", "--out"], type="path", help="Where to write. " + "More words here. " * 12),
        opt("n", type="integer", metavar="N", default=5, help="How many."),
        opt("@json", flags=["--json"], help="All options as one JSON object."),
        Param("file", help="The input."),
    ]
    hints = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
    return cmd(
        "go",
        "Go somewhere.",
        description="Go somewhere. " + "Far away, and further. " * 12 + "\n\nMore.",
        params=params,
        annotations=hints,
        examples=["t go x.txt"],
        aliases=["g", "gX"],
    )


def test_a_command_s_help_in_click_s_order():
    out = h.command_help("t go", full_command())
    sections = out.split("\n\n")
    assert sections[:2] == ["Usage:\n  t go [options] [FILE]", "Go somewhere."]
    assert sections[2].startswith("Far away") and sections[3] == "More."
    assert sections[4] == "Arguments:\n  [FILE]  The input."
    assert sections[5].startswith("Options:\n  -o, --out PATH  Where to write. More words")
    assert sections[5].endswith("\n  --n N           How many. (integer; default: 5)") and "--json" not in out
    assert sections[6:] == ["Hints: read-only, idempotent.", "Examples:\n  t go x.txt", "Aliases: g, gX\n"]
    assert "Aliases" not in h.command_help("t go", cmd(aliases=["g"], schema={"type": "object"}))
    assert "\nHints: destructive.\n" in h.command_help("t go", cmd(annotations={"destructiveHint": True}))


def test_a_command_s_help_over_its_budget_is_cut_to_first_sentences():
    command = full_command()
    full = h.command_help("t go", command)
    assert h.command_help("t go", command, len(full)) == full
    short = h.command_help("t go", command, len(full) - 1)
    assert short.endswith("\n\nDescriptions are cut to fit; `t go --help-all` shows them whole.\n")
    assert "  -o, --out PATH  Where to write.\n" in short and "More words" not in short
    assert "\n\nFar away, and further.\n\n" in short and "More." not in short
    assert h.command_help("t go", command, 10, full=True) == full
    cut = "w" * 195 + " zz more words."  # a word ends at 198: within 201 characters, not within 200 with "..."
    then = "v" * 195 + " yy more words."
    command = cmd(summary=cut, description=f"{cut} {then} Then.", params=[opt("a", help="u" * 95 + " xx more words")])
    short = h.command_help("t go", command, 10)
    assert f"\n\n{'w' * 195}...\n\n{'v' * 195}...\n\n" in short  # the first line and sentence: 200 characters
    assert f"  --a TEXT  {'u' * 95}...\n" in short  # an option's help: 100


def test_an_option_s_notes_and_the_lines_under_it_survive_a_cut_description():
    mode = opt("mode", choices=["fast", "slow"], help="How. " + "Long words. " * 20, details=["fast  Quick.", "slow"])
    rows = opt(
        "rows",
        action="append",
        metavar="JSON",
        help="Rows." + " More." * 30,
        notes="each a JSON object",
        details=["a*: string  The a."],
    )
    command = cmd(params=[mode, rows])
    full = h.command_help("t go", command)
    assert "  --mode {fast,slow}  How. Long words." in full and "\n      fast  Quick.\n      slow\n  --rows" in full
    assert "More. [each a JSON object] (repeatable)\n      a*: string  The a.\n" in full
    short = h.command_help("t go", command, len(full) - 1)
    assert "More." not in short and "Rows. [each a JSON object] (repeatable)\n      a*: string  The a.\n" in short
    assert "\n      fast  Quick.\n      slow\n" in short
    many = opt("m", choices=[f"choice-{i}" for i in range(9)], details=[f"choice-{i}  C." for i in range(9)])
    assert "one of" not in h.command_help("t go", cmd(params=[many]))  # the lines under it list them


def test_a_passthrough_command_s_help_is_its_usage_text():
    command = cmd(summary="Run it.", passthrough=True, usage="Run it. usage: go [-x] FILE", description="Other.")
    assert h.command_help("t go", command) == (
        "Usage:\n  t go [ARGS ...]\n\nRun it.\n\nusage: go [-x] FILE\n\n"
        "Arguments are passed to the command unchanged.\n"
    )
    plain = cmd(summary="Run it.", passthrough=True, description="Run it. Then more.")
    assert "\n\nRun it.\n\nThen more.\n\n" in h.command_help("t go", plain, 10)  # not cut: it is all it has


def test_pages_say_which_part_they_are_and_how_to_read_the_next():
    assert h.page(["only\n\n"], 1, "t doc") == "only\n"
    pages = ["one", "two", "three"]
    assert h.page(pages, 1, "t doc") == "one\n\n[Part 1 of 3. Run `t doc --part 2` for the next.]\n"
    assert h.page(pages, 3, "t doc") == "three\n\n[Part 3 of 3. The last part.]\n"
    assert h.page(["one", "two"], 2, "t doc") == "two\n\n[Part 2 of 2. The last part.]\n"
    assert h.page(["the X\n"], 1, "t doc") == "the X\n"


GUIDE = "# Guide\n\nIntro.\n\n## One\n\nBody one.\n\n### Sub\n\nx\n\n### Sub two\n\ny\n\n## Two\n\nBody two.\n"


def test_a_section_listing_gives_each_sub_section_s_size():
    doc = markdown.parse(GUIDE)
    [listing] = h.section_listing(doc, doc.root, "t guide", 10_000)
    size = len(doc.text(doc.root.start, doc.root.end))
    assert listing == (
        f"Sections ({size:,} characters in all):\n  one  One (45 chars, 2 sub-sections)\n  two  Two (17 chars)\n\n"
        "Run `t guide <section>` to read one."
    )
    one = doc.root.children[0]
    assert (
        "  sub      Sub (10 chars)\n  sub-two  Sub two (14 chars)\n"
        in h.section_listing(doc, one, "t guide one", 10_000)[0]
    )
    wordy = markdown.parse("# G\n\n## " + "w" * 75 + " zz more words\n\nx")  # a heading is cut at 80 characters
    assert f" {'w' * 75}... (" in h.section_listing(wordy, wordy.root, "t", 10_000)[0]
    single = markdown.parse(GUIDE.replace("### Sub two\n\ny\n\n", ""))
    assert "  one  One (29 chars, 1 sub-section)\n" in h.section_listing(single, single.root, "t", 10_000)[0]


def test_many_sections_are_listed_in_pieces_that_fit():
    doc = markdown.parse("# Big\n\n" + "".join(f"## Part {i}\n\nText.\n\n" for i in range(40)))
    size, pieces, first = len(doc.text(doc.root.start, doc.root.end)), h.section_listing(doc, doc.root, "t", 700), 1
    assert len(pieces) > 1 and all(len(p) <= 700 for p in pieces)
    for piece in pieces:
        rows = [line.split()[0] for line in piece.splitlines() if line.startswith("  ")]
        assert rows == [f"part-{i}" for i in range(first - 1, first - 1 + len(rows))]
        span = f"Sections ({first}-{first + len(rows) - 1} of 40; {size:,} characters in all):"
        assert piece.splitlines()[0] == span and piece.endswith("\n\nRun `t <section>` to read one.")
        first += len(rows)
    assert first == 41


def test_listing_pieces_are_as_full_as_their_rows_bounds_allow():
    """Rows go into a piece while their bounds (name, text and 34 for the indent, padding, spaces and newline) stay
    within the room less the `Run` line and 100 characters."""
    doc = markdown.parse("# Big\n\n" + "".join(f"## Part {i} {'x' * (i % 7)}\n\nText.\n\n" for i in range(40)))
    limit = len("Run `t <section>` to read one.") + 100
    for room in range(500, 800):
        pieces = h.section_listing(doc, doc.root, "t", room)
        rows = [[line.strip().split(None, 1) for line in p.splitlines() if line.startswith("  ")] for p in pieces]
        sizes, used = [0], 0
        for name, text in (row for piece in rows for row in piece):
            cost = len(name) + len(text) + 34
            if sizes[-1] and used + cost > room - limit:
                sizes, used = [*sizes, 0], 0
            sizes[-1], used = sizes[-1] + 1, used + cost
        assert [len(r) for r in rows] == sizes, room


def test_a_topic_reads_whole_when_it_fits_and_by_sections_when_not():
    topic = Topic("guide", summary="A guide to it.")
    doc = markdown.parse(GUIDE)
    [whole] = h.topic_pages("t guide", topic, doc, doc.root, "t guide", 10_000, 10_000)
    assert whole.startswith("t guide - A guide to it.\n\n# Guide\n\nIntro.") and "Body two." in whole
    [split] = h.topic_pages("t guide", topic, doc, doc.root, "t guide", 40, 10_000)
    assert split.startswith("t guide - A guide to it.\n\n# Guide\n\nIntro.\n\nSections (") and "Body" not in split
    one = doc.root.children[0]
    [section] = h.topic_pages("t guide", topic, doc, one, "t guide one", 10_000, 10_000)
    assert section.startswith("## One\n\nBody one.") and "A guide to it" not in section  # a title on the first page
    assert h.topic_pages(
        "t e", Topic("e", summary="Empty."), markdown.parse(""), markdown.parse("").root, "t e", 10, 10
    ) in (["t e - Empty.\n\n"], [])
    long = Topic("g", summary="w" * 195 + " zz more words")
    assert h.topic_pages("t g", long, doc, doc.root, "t g", 10_000, 10_000)[0].startswith(f"t g - {'w' * 195}...\n\n")


def sized(size: int) -> markdown.Document:
    """A document of `size` characters with one section."""
    doc = markdown.parse("# Guide\n\nx\n\n## A\n\nBody.")
    pad = size - len(doc.text(doc.root.start, doc.root.end))
    return markdown.parse(f"# Guide\n\n{'x' * (pad + 1)}\n\n## A\n\nBody.")


def test_a_topic_is_split_when_it_is_larger_than_a_page_s_room():
    topic = Topic("guide", summary="G.")  # the header `t g - G.\n\n` is 10 characters; 200 are kept for the note
    for size, cap, split in [(600, 810, False), (600, 809, True), (500, 0, False), (501, 0, True)]:  # room >= 500
        doc = sized(size)
        assert len(doc.text(doc.root.start, doc.root.end)) == size
        pages = h.topic_pages("t g", topic, doc, doc.root, "t g", 10**6, cap)
        assert ("Body." not in "".join(pages)) is split, (size, cap)


def test_a_section_listing_joins_the_last_page_when_it_fits_the_room():
    doc, topic = markdown.parse(GUIDE.replace("Intro.", "Intro. " * 80)), Topic("guide", summary="G.")
    own = doc.text(doc.root.start, doc.root.own_end)
    listing = h.section_listing(doc, doc.root, "t g", 10_000)[0]
    fits = len(own) + 2 + len(listing)
    cap = max(fits, 500) + 10 + 200  # the room is the cap less the header and the note's 200
    assert h.topic_pages("t g", topic, doc, doc.root, "t g", 10, cap) == [f"t g - G.\n\n{own}\n\n{listing}"]
    assert fits >= 500 and h.topic_pages("t g", topic, doc, doc.root, "t g", 10, cap - 1) == [
        f"t g - G.\n\n{own}",
        listing,
    ]


def test_in_context_names_the_five_latest_entities_with_three_domains_each():
    entities = [(f"E-{i}", ["jira"]) for i in range(7)]
    assert h.in_context(entities) == "\nIn context: E-0 (jira), E-1 (jira), E-2 (jira), E-3 (jira), E-4 (jira).\n"
    line = h.in_context([("x" * 50, ["a", "b", "c", "d"])])
    assert line == f"\nIn context: {'x' * 37}... (a, b, c).\n"
    domains = ["a" * 20, "b" * 20, "c" * 17]  # 61 characters joined: cut at 60
    assert h.in_context([("x", domains)]) == f"\nIn context: x ({'a' * 20}, {'b' * 20}...).\n"


@pytest.mark.parametrize(
    ("tool", "line"),
    [
        ({"outputSchema": {"type": "object", "properties": {"url": {}, "id": {}}}}, "Returns: a JSON object: url, id"),
        (
            {"outputSchema": {"type": "array", "items": {"type": "object", "properties": {"name": {}}}}},
            "Returns: a JSON array of objects: name",
        ),
        (
            {"outputSchema": {"type": "object", "description": "The created issue. Then more."}},
            "Returns: The created issue.",
        ),
        (
            {"description": "Render a chart. " + "Long words about it. " * 30 + "Returns the URL of the PNG."},
            "Returns: The URL of the PNG.",
        ),
        ({"description": "Render a chart and store it somewhere."}, None),  # nothing says it: no line, no guess
        ({"description": "Render a chart. Returns the URL of the PNG."}, None),  # shown already: said once
    ],
)
def test_a_command_s_help_says_what_it_returns_where_anything_says_so(tool, line):
    from mcp_cli.sources.mcp_tools import command

    out = h.command_help("t s x", command("s", {"name": "x", **tool}), 400)
    said = [row for row in out.splitlines() if row.startswith("Returns:")]
    assert said == ([line] if line else [])


def test_a_listing_s_usage_line_names_the_other_options_while_they_fit_else_counts_them():
    few = cmd("put", params=[opt("v"), opt("w", type="integer")])
    assert h.usage("t put", few, counted=True) == "  t put [--v TEXT] [--w INT]"
    some = cmd("put", params=[opt(f"option-{i}") for i in range(6)])  # with their values, one line is too short
    assert (
        h.usage("t put", some, counted=True) == "  t put [options: " + " ".join(f"--option-{i}" for i in range(6)) + "]"
    )
    assert h.arguments(some) == "    [options: " + " ".join(f"--option-{i}" for i in range(6)) + "]"
    many = cmd("put", params=[opt(f"option-{i}") for i in range(9)])  # their names alone are too long
    assert h.usage("t put", many, counted=True) == "  t put [9 options]"
    assert h.usage("t put", many) == "  t put [options]"  # a command's own help lists them below
    assert h.arguments(many) == "    [9 options]"  # a listing's one line
    two = h.arguments(many, 2).splitlines()  # a search answer's two: each with its value, wrapped between them
    assert len(two) == 2 and two[1].startswith("      [--") and two[1].endswith("[--option-8 TEXT]")
    named = h.arguments(cmd("put", params=[opt(f"option-number-{i}") for i in range(9)]), 2).splitlines()
    assert named[0].startswith("    [options: --option-number-0") and named[1].endswith("--option-number-8]")


def test_a_search_answer_s_usage_line_writes_out_choices_a_listing_names_choice():
    methods = ["get", "get_comments", "get_sub_issues", "get_parent", "get_labels"]  # 50 characters
    read = cmd("read", params=[opt("method", required=True, choices=methods), opt("number", required=True)])
    assert h.arguments(read) == "    --method CHOICE --number TEXT"  # a listing: the command's help lists them
    assert h.arguments(read, 2) == "    --method {" + ",".join(methods) + "} --number TEXT"  # a search answer


def test_a_name_no_domain_has_is_pointed_to_the_row_whose_summary_names_it():
    """A server whose key says nothing is led by its product's name in its row (`mcp`: `Pipedrive: ...`): a call by
    that name is told where it is, before any spelling that merely looks close (`gdrive`)."""
    root = Group(
        "t",
        children=[
            Group("mcp", summary="Pipedrive: deals, contacts.", children=[cmd("list-deals")]),
            Group("gdrive", summary="Files, folders.", children=[cmd("list-files")]),
            Group("srv", summary="Outlook Mail: email, drafts.", children=[cmd("send-email")]),
            Group("vault", summary="Read secrets in Vault (secrets).", children=[cmd("read")]),
            Group("1password", summary="Read secrets in 1Password (secrets).", children=[cmd("read")]),
        ],
    )
    said = {word: invoke(Tree(root), [word, "--help"]).message.splitlines()[0] for word in WORDS}
    assert said == WORDS


WORDS = {
    "pipedrive": "Error: `t` has no domain `pipedrive`. Did you mean `mcp` or `gdrive`?",
    "outlook-mail": "Error: `t` has no domain `outlook-mail`. Did you mean `srv`?",
    "secrets": "Error: `t` has no domain `secrets`. Did you mean `vault` or `1password`?",
    "mail": "Error: `t` has no domain `mail`. Did you mean `srv`?",
    "ai": "Error: `t` has no domain `ai`.",  # too short to be a name a row gives
}
