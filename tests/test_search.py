"""`search WORDS`: stems, verbs that stand for operations, stop words, CJK text, tools known by name only, and
words with an apostrophe, through a real tree of in-process upstream servers and through a served session."""

import re

import anyio
import pytest

from mcp_cli.handlers.search import SURE, SURE_ROWS
from mcp_cli.search.ranking import Index, read, stem
from mcp_cli.testing import ainvoke, mock_upstream, ok, wrap

from .conftest import served
from .listed import config, entry

pytestmark = pytest.mark.anyio


def create_issue(title: str) -> str:
    """Create a new issue in a repository."""
    return title


def list_issues(state: str = "open") -> str:
    """List the issues of a repository, open or closed."""
    return state


def close_issue(number: int) -> str:
    """Close an issue."""
    return str(number)


def get_file_contents(path: str) -> str:
    """Get the contents of a file in a repository."""
    return path


def show_banner() -> str:
    """Show a banner."""
    return ""


def list_logs(since: str) -> str:
    """Read the log entries since a time."""
    return since


def get_statuses(ref: str) -> str:
    """Get the check statuses of a commit."""
    return ref


def read_news() -> str:
    """Read the latest news headlines."""
    return ""


def archive_repository(repo: str) -> str:  # no docstring: no description
    return repo


def wenjian(path: str) -> str:
    """删除一个文件。"""
    return path


def wenti(title: str) -> str:
    """在项目中创建一个新的问题。"""
    return title


def tracker():
    return mock_upstream("tracker", create_issue, list_issues, close_issue, get_file_contents, show_banner)


def misc():
    return mock_upstream("misc", list_logs, get_statuses, read_news, archive_repository, wenjian, wenti)


@pytest.fixture(scope="module")
def tree():
    async def build():
        return await wrap({"tracker": tracker(), "misc": misc()})

    return anyio.run(build)


async def ranked(tree, words: str) -> list[str]:
    """The command paths `search` prints, best first."""
    result = await ainvoke(tree, ["search", *words.split(), "--limit", "8"])
    assert result.ok, result.output
    return re.findall(r"^  (\S+ \S+)", result.output, re.M)


def test_stems_keep_words_apart_and_bring_forms_together():
    assert stem("logged") == stem("logs") == stem("log")
    assert stem("statuses") == stem("status")
    assert stem("news") != stem("new")


@pytest.mark.parametrize(
    ("words", "first"),
    [
        ("file a bug", "tracker create-issue"),  # "file" is the verb here, not the thing
        ("resolve issue 12", "tracker close-issue"),  # a synonym of the name's verb
        ("open a new ticket", "tracker create-issue"),
        ("show me the open issues", "tracker list-issues"),  # "show" says nothing of which command
        ("what was logged yesterday", "misc list-logs"),
        ("statuses of my commit", "misc get-statuses"),
        ("today's news", "misc read-news"),
        ("archive a repository", "misc archive-repository"),  # no description: found by its name
        ("创建问题", "misc wenti"),  # Chinese description, Chinese query
        ("删除文件", "misc wenjian"),
    ],
)
async def test_search_ranks_the_command_meant_first(tree, words, first):
    assert (await ranked(tree, words))[0] == first


async def test_stop_words_alone_find_nothing(tree):
    result = await ainvoke(tree, ["search", "can", "you", "please", "help", "me"])
    assert result.ok and "No command fits" in result.output


async def test_words_with_an_apostrophe_are_searched_as_words(tree):
    result = await ainvoke(tree, "search What's open in the tracker?")
    assert result.ok, result.output
    assert "tracker list-issues" in result.output
    refused = await ainvoke(tree, "tracker create-issue --title What's")  # only `search` takes plain words
    assert not refused.ok and "cannot split" in refused.message


async def test_a_served_session_searches_words_with_an_apostrophe(tmp_path):
    team = config(tmp_path / "team.json", {"gh": entry("create_issue", "list_issues", "get_me")})
    async with served("serve", str(team), env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}) as client:
        hits = await ok(client, command="search Who's signed in? who am I")
        assert hits.splitlines()[0].split()[:2] == ["gh", "get-me"]
        hits = await ok(client, command="search Where's the list of issues? I'd like to see them")
        assert hits.splitlines()[0].split()[:2] == ["gh", "list-issues"]


async def test_by_default_only_strong_matches_are_shown_and_a_number_asked_for_shows_that_many(tree):
    async def paths(*argv: str) -> list[str]:
        result = await ainvoke(tree, ["search", *argv])
        assert result.ok, result.output
        return re.findall(r"^  (\S+ \S+)", result.output, re.M)

    strong, five = await paths("close", "an", "issue"), await paths("close", "an", "issue", "-n", "5")
    assert strong == ["tracker close-issue"]  # the other issue commands match "issue" only: under half its score
    assert five[0] == "tracker close-issue" and {"tracker list-issues", "tracker create-issue"} <= set(five[1:])
    assert await paths("issues", "-n", "2") == (await paths("issues", "-n", "5"))[:2]


def sakujo(path: str) -> str:
    """ファイルを削除します。"""
    return path


def creer_ticket(titre: str) -> str:
    """Créer un problème dans le dépôt."""
    return titre


def otchet(period: str) -> str:
    """Создать отчёт о продажах за период."""
    return period


@pytest.mark.parametrize(
    ("words", "first"),
    [
        ("ファイルを削除", "intl sakujo"),  # Japanese: character pairs
        ("créer un problème", "intl creer-ticket"),
        ("creer un probleme", "intl creer-ticket"),  # accents folded: typed without them, it still meets
        ("отчёт о продажах", "intl otchet"),  # Cyrillic words are words
        ("отчет", "intl otchet"),  # ё folded too
        ("create ticket", "intl creer-ticket"),  # the English of its name
        ("删除文件", "misc wenjian"),  # Chinese, beside them
    ],
)
async def test_descriptions_in_other_languages_are_found_by_a_query_in_their_language(words, first):
    tree = await wrap({"intl": mock_upstream("intl", sakujo, creer_ticket, otchet), "misc": misc()})
    assert (await ranked(tree, words))[0] == first


async def test_a_confident_answer_carries_the_usage_of_its_first_match_under_its_row(tree):
    result = await ainvoke(tree, ["search", "close", "an", "issue"])
    lines = result.output.splitlines()
    assert result.ok and lines[0].split()[:2] == ["tracker", "close-issue"]
    assert lines[1] == "    --number INT" and len(lines) == 2  # what follows the row's path; no footer


def update_issue(
    number: int,
    title: str = "",
    body: str = "",
    labels: str = "",
    assignees: str = "",
    milestone: str = "",
    state: str = "",
    state_reason: str = "",
    issue_type: str = "",
) -> str:
    """Update an issue's fields."""
    return str(number)


async def test_a_search_answer_names_the_optional_options_a_listing_only_counts():
    """Eight optional options are too many to name in a listing's one line; a search answer, which shows a few
    commands, gives each usage line two, so `--labels TEXT` is seen without a `--help` first."""
    tree = await wrap({"tracker": mock_upstream("tracker", update_issue, close_issue)})
    listing = (await ainvoke(tree, ["tracker", "--help"])).output
    assert "--number INT [8 options]" in listing and "--labels" not in listing
    found = (await ainvoke(tree, ["search", "update", "an", "issue"])).output.splitlines()
    assert found[0].split()[:2] == ["tracker", "update-issue"]
    usage = " ".join(line.strip() for line in found[1:3])
    assert usage.startswith("--number INT [--title TEXT]") and "[--labels TEXT]" in usage
    assert "[--issue-type TEXT]" in usage and len(found[1]) <= 100 and len(found[2]) <= 100  # wrapped, not counted


@pytest.mark.parametrize(("words", "shown"), [("issues", 2), ("issue", 3)])
async def test_an_answer_whose_first_is_all_but_sure_lists_two_rows(tree, words, shown):
    hits = Index(tree).search(words)  # issues: list-issues far ahead; issue: close- and create-issue neck and neck
    assert len(hits) == 3 and (hits[1][0] < SURE * hits[0][0]) is (shown == SURE_ROWS)
    result = await ainvoke(tree, ["search", words])
    assert re.findall(r"^  (\S+ \S+)", result.output, re.M) == [path for _, path, _ in hits][:shown]


async def test_when_no_command_fits_the_first_line_says_so_and_the_closest_commands_follow_with_usage(tree):
    result = await ainvoke(tree, "search Read a recipe for Italian lasagna")  # `read` alone meets read-news
    assert (await ranked(tree, "Read a recipe for Italian lasagna"))[0] == "misc read-news"
    lines = result.output.splitlines()
    assert result.ok and lines[0] == (  # the words of things no command knows: look elsewhere rather than reword
        "No command fits 'Read a recipe for Italian lasagna'; none knows recipe, lasagna. The closest:"  # a name: no
    )
    assert lines[1].split()[:2] == ["misc", "read-news"] and lines[2].split()[0] == "tracker"
    assert lines[3].split()[0] in ("misc", "tracker") and lines[4].startswith("    --")  # usage under each that has
    assert len(re.findall(r"^  \S+ \S+", result.output, re.M)) <= 3
    asked = await ainvoke(tree, "search -n 2 Read a recipe for Italian lasagna")  # rows asked for: shown, after it
    assert asked.output.startswith("No command fits") and len(re.findall(r"^  \S+ \S+", asked.output, re.M)) == 2


async def test_a_served_session_admits_a_miss_and_finds_a_fit(tmp_path):
    team = config(tmp_path / "team.json", {"gh": entry("create_issue", "list_issues", "get_me")})
    async with served("serve", str(team), env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}) as client:
        missed = await ok(client, command="search get the weather in Paris")  # `get` alone meets get-me
        assert (
            missed.splitlines()[0]
            == "No command fits 'get the weather in Paris'; none knows weather. The closest:"  # a place: no
        )
        assert missed.splitlines()[1].split()[:2] == ["gh", "get-me"] and missed.splitlines()[2] == "    [--repo TEXT]"
        found = await ok(client, command="search list the issues")
        assert re.search(r"^  gh list-issues .*\n    \[--repo TEXT\]\n", found, re.M)


def switch_branch(name: str) -> str:
    """Switch to another branch of the repository."""
    return name


def merge_branch(name: str) -> str:
    """Merge a branch into the current one."""
    return name


def create_branch(name: str) -> str:
    """Create a branch."""
    return name


def set_thermostat(entity: str, degrees: float) -> str:
    """Set a thermostat's temperature."""
    return entity


def toggle_light(entity: str) -> str:
    """Turn a light on or off."""
    return entity


async def test_where_the_words_fit_weakly_the_embedding_models_closest_takes_the_last_place():
    tree = await wrap(
        {
            "git": mock_upstream("git", switch_branch, merge_branch, create_branch),
            "home": mock_upstream("home", set_thermostat, toggle_light),
        }
    )
    words_only = Index(tree)
    words_only.semantic = None
    asked = "make the living room warmer"  # `make` reads as create: the words meet create-branch alone
    assert [p for _, p, _ in words_only.search(asked, 5)] == ["git create-branch"]
    said = (await ainvoke(tree, ["search", "-n", "5", *asked.split()])).output
    # one place of five: the words' own next ones, where they have them, keep the rest
    assert re.findall(r"^  (\S+ \S+)", said, re.M) == ["git create-branch", "home set-thermostat"]
    sure = "switch to the main branch"  # the words fit it well: their ranking stands, the model takes no place
    assert [p for _, p, _ in Index(tree).search(sure, 5)] == [p for _, p, _ in words_only.search(sure, 5)]


def list_releases(repo: str) -> str:
    """List the published versions of a repository."""
    return repo


def get_latest_release(repo: str) -> str:
    """Get the newest published version of a repository."""
    return repo


async def test_a_group_s_name_alone_asks_for_what_it_holds():
    tree = await wrap({"releases": mock_upstream("releases", list_releases, get_latest_release)})
    said = (await ainvoke(tree, "search release")).output  # read as a verb (deploy), it met no command's words
    assert not said.startswith("No command fits") and said.splitlines()[0].split()[0] == "releases"


def list_commits(repo: str) -> str:
    """List the commits of a branch."""
    return repo


async def test_keywords_that_start_with_a_group_s_noun_have_no_verb():
    tree = await wrap(
        {
            "releases": mock_upstream("releases", list_releases, get_latest_release),
            "commits": mock_upstream("commits", list_commits),
        }
    )
    said = (await ainvoke(tree, "search release commits list")).output  # an agent's keywords: `release` names a group
    assert not said.startswith("No command fits") and {"releases", "commits"} <= {
        line.split()[0] for line in said.splitlines() if line.startswith("  ") and not line.startswith("    ")
    }
    nouns = Index(tree).nouns
    assert read("release commits list", nouns).ops == [] and read("release the new version", nouns).ops == ["@deploy"]


def create_or_update_file(path: str, content: str) -> str:
    """Create or update a file in a repository."""
    return path


async def test_a_verb_that_also_names_a_group_asks_for_its_operation_not_the_group():
    tree = await wrap(
        {
            "files": mock_upstream("files", create_or_update_file, get_file_contents),
            "issues": mock_upstream("issues", create_issue, close_issue),
        }
    )
    said = (await ainvoke(tree, "search file a bug about the login page")).output  # "file": create, and a group's noun
    assert said.splitlines()[0].split()[:2] == ["issues", "create-issue"]


async def test_a_typo_d_request_is_still_found_and_not_declined(tree):
    result = await ainvoke(tree, "search clsoe the isssue")
    assert result.ok and result.output.splitlines()[0].split()[:2] == ["tracker", "close-issue"]


async def test_a_request_naming_a_person_and_a_branch_is_not_declined(tree):
    result = await ainvoke(tree, "search create an issue for Priya about the release/2.4 branch")
    assert not result.output.startswith("No command fits")
    assert result.output.splitlines()[0].split()[:2] == ["tracker", "create-issue"]


def search_document(query: str) -> str:
    """搜索云文档。"""
    return query


def send_message(text: str) -> str:
    """发送消息。"""
    return text


async def test_a_tool_described_in_another_script_is_found_by_its_name_and_parameters():
    feishu = await wrap({"feishu": mock_upstream("feishu", search_document, send_message), "misc": misc()})
    assert (await ranked(feishu, "search the documents"))[0] == "feishu search-document"
    assert (await ranked(feishu, "send a message"))[0] == "feishu send-message"
