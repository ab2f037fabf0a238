"""Search in-process (`search.py`): how text becomes terms, how a query's words are weighed (its leading verb, a
question, what to write), what each field of a command counts, BM25's scores, how many results show, the context
boost, and an embedding model's share; the ranking of real queries is in test_search.py."""

import logging
import math

import pytest

from mcp_cli.search import embeddings, ranking, spelling
from mcp_cli.search.ranking import Index, operations, query_weights, read, stem, terms, tokens
from mcp_cli.tree import Command, Group, Param, Tree

NOOP = {"kind": "python", "target": "builtins:print"}


@pytest.fixture(autouse=True)
def words_only(monkeypatch):
    """The lexical machinery alone (the model, on by default, is given to an index where a test wants it)."""
    monkeypatch.setenv("MCP_CLI_EMBEDDINGS", "none")
    embeddings.configured.cache_clear()
    yield
    embeddings.configured.cache_clear()


def command(name: str, summary: str = "", **fields) -> Command:
    return Command(name, summary=summary, **{"handler": NOOP, **fields})


def tree(*nodes) -> Tree:
    return Tree(Group("t", children=[command("search", handler={"kind": "search"}), *nodes]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getPullRequest_files", ["get", "pull", "request", "files"]),
        ("删除文件", ["删除", "除文", "文件"]),  # a run of CJK script: overlapping pairs
        ("问 open", ["问", "open"]),  # a lone CJK character is a term of its own
        ("ｆｕｌｌ　width", ["full", "width"]),  # NFKC
        ("Créer un problème", ["creer", "un", "probleme"]),  # accents folded
        ("créerProblème_dépôt", ["creer", "probleme", "depot"]),  # a name: split by case and `_` as ever
        ("Größe Привет Ελλάδα", ["grosse", "привет", "ελλαδα"]),  # other scripts' words are words
        ("", []),
    ],
)
def test_text_becomes_tokens(text, expected):
    assert tokens(text) == expected


def test_terms_are_stems_without_stop_words_unless_asked():
    assert terms("the logged issues") == ["log", "issu"]
    assert terms("the logged issues", stop=False) == ["the", "log", "issu"]


@pytest.mark.parametrize(
    ("name", "summary", "ops"),
    [
        ("create-issue", "", ["@create"]),  # the name's first word
        ("issue-create", "", ["@create"]),  # or its last
        ("logs", "Get logs from a container.", ["@get"]),  # else the summary's first word
        ("open", "", ["@create", "@get"]),  # a verb of two operations
        ("toggle-flag", "", ["@" + stem("toggle")]),  # a verb of no operation row is an operation of its own
        ("thing", "A thing.", []),
        ("thing", "A list of things.", []),  # the summary's first word only
        ("datadog-list-dashboards", "", ["@list"]),  # else another word of the name (after a server's prefix)
        ("create-list", "", ["@create"]),  # the first word before the others
    ],
)
def test_the_operations_of_a_command(name, summary, ops):
    assert operations(name, summary) == ops


@pytest.mark.parametrize(
    ("query", "weights"),
    [
        ("create an issue", {"@create": 2.0, "creat": 1.0, "issu": 1.0, "=issue": 0.5}),
        ("show issues", {"@get": 2.0, "@list": 2.0, "issu": 1.0, "=issues": 0.5}),  # `show` is a stop word too
        ("what is open", {"open": 1.0, "=open": 0.5}),  # a question has no leading verb
        ("issues open", {"issu": 1.0, "=issues": 0.5, "open": 1.0, "=open": 0.5}),  # only the first word leads
        ("delete the doc", {"@delete": 2.0, "delet": 1.0, "doc": 1.0, "=doc": 0.5, "document": 0.8}),  # synonyms
        ("sign in", {"@login": 2.0, "login": 1.0}),  # a phrase is read as its word
        ("issues issue", {"issu": 1.0, "=issues": 0.5, "=issue": 0.5}),  # a term keeps its highest weight
        ("can you please help me", {}),
        ("", {}),
        (
            "file a note about the weekend to the board",
            {
                "@create": 2.0,
                "file": 1.0,
                "note": 1.0,
                "=note": 0.5,
                "comment": 0.8,
                "weekend": 0.5,
                "=weekend": 0.25,  # what to write: half weight
                "board": 1.0,
                "=board": 0.5,
                "project": 0.8,  # where it goes: full weight again
            },
        ),
    ],
)
def test_a_query_s_words_and_their_weights(query, weights):
    assert query_weights(query) == pytest.approx(weights)


def test_what_each_field_of_a_command_counts():
    zebra = command(
        "zebra",
        "Zebra.",
        description="A zebra of zebras.",
        aliases=["zeb"],
        params=[
            Param("stripes", flags=["--stripes"]),
            Param("from", flags=["--from"]),
            Param("@json", flags=["--json"]),
        ],
    )
    index = Index(tree(Group("z", children=[zebra])))
    assert [path for path, _ in index.docs] == ["z zebra"]  # the `search` command itself is not indexed
    assert dict(index.postings) == {
        "zebra": [(0, 3 + 2 + 2)],  # path 3, summary 2, description 1 for each
        "z": [(0, 3)],
        "zeb": [(0, 3)],  # an alias is part of the path
        "stripe": [(0, 1)],  # a parameter's name 1 (not `@json`), stop word or not
        "from": [(0, 1)],
        "=z": [(0, 3)],
        "=zebra": [(0, 3)],
        "=zeb": [(0, 3)],  # the path's words as written
    }
    assert index.lengths == [24] and index.avg == 24
    late = Index(tree(command("x", description="y " * 300 + "q")))
    assert "q" not in late.postings and "y" in late.postings  # the description's first 600 characters only
    ops = Index(tree(command("create-thing")))
    assert ops.postings["@create"] == [(0, 3)] and ops.postings["thing"] == [(0, 3)]


def bm25(tf: float, length: float, avg: float, n: int, df: int) -> float:
    """Okapi BM25 of one term, k1 1.2 and b 0.75."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))


def test_scores_are_bm25_with_rarer_words_worth_more():
    index = Index(
        tree(
            command("alpha", "Beta."),
            command("beta", "Gamma."),
            command("gamma", "Beta."),
            command("delta", "Epsilon zeta eta theta."),
        )
    )
    lengths, avg = index.lengths, sum(index.lengths) / 4
    assert lengths[0] != avg
    [(score, path, _)] = index.search("alpha", 5)
    assert path == "alpha" and score == pytest.approx(1.5 * bm25(3, lengths[0], avg, 4, 1))  # alpha 1, =alpha 0.5
    hits = index.search("beta", 5)
    assert [p for _, p, _ in hits] == ["beta", "alpha", "gamma"]  # in the path first; equal scores by path
    assert hits[1][0] == hits[2][0] == pytest.approx(bm25(2, lengths[0], avg, 4, 3))
    assert [p for _, p, _ in index.search("xylophone alpha", 5)] == ["alpha"]  # a word no command has adds nothing
    rare, common = index.search("alpha", 5)[0][0], index.search("gamma", 5)[0][0]
    assert rare > common  # `alpha` is in one command, `gamma` in two


def test_a_command_only_stop_words_match_is_not_found():
    assert Index(tree(command("get-me", "Who am I."))).search("can you please", None) == []
    assert Index(Tree(Group("t"))).search("anything", None) == [] and Index(Tree(Group("t"))).avg == 1.0


def test_by_default_five_strong_results_and_a_number_asked_for_gives_that_many():
    index = Index(tree(*[command(f"list-{i}", "List things.") for i in range(8)], command("other", "Things.")))
    assert [p for _, p, _ in index.search("list things", None)] == [f"list-{i}" for i in range(5)]
    assert [p for _, p, _ in index.search("list things", 7)] == [f"list-{i}" for i in range(7)]
    weak = Index(tree(command("close-issue", "Close an issue."), command("list-issues", "List the issues.")))
    assert [p for _, p, _ in weak.search("close an issue", None)] == ["close-issue"]  # the other under half the score
    assert [p for _, p, _ in weak.search("close an issue", 5)] == ["close-issue", "list-issues"]
    assert len(Index(tree(*[command(f"x-{i}") for i in range(9)])).search("x", None)) == 5


def test_commands_of_the_context_s_domains_score_half_as_much_again():
    index = Index(tree(Group("a", children=[command("deploy")]), Group("b", children=[command("deploy")])))
    (plain, first, _), (_, second, _) = index.search("deploy", 5)
    assert (first, second) == ("a deploy", "b deploy")
    (boosted, first, _), (other, _, _) = index.search("deploy", 5, prefer=["b"])
    assert first == "b deploy" and boosted == pytest.approx(1.5 * plain) and other == pytest.approx(plain)
    assert index.search("deploy", 5, prefer=["b deploy"])[0][1] == "b deploy"
    assert index.search("deploy", 5, prefer=["bb"])[0][1] == "a deploy"


class FakeModel:
    """Vectors by keyword: flights one way, rain near it, the ground opposite, anything else in between."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def vectors(self, texts):
        import numpy as np

        self.calls.append(list(texts))
        return np.array(
            [
                [1.0, 0.0]
                if "flight" in t or "plane" in t
                else [0.8, 0.6]
                if "rain" in t
                else [-1.0, 0.0]
                if "ground" in t
                else [0.6, 0.8]
                for t in texts
            ]
        )

    def kept(self, texts):  # a model that keeps no vectors (as `embeddings.Model` with no weights): computed
        return self.vectors(texts)


def test_an_embedding_model_decides_its_share_of_the_score():
    model = FakeModel()
    index = Index(
        tree(
            command("book-flight", "Book a flight."),
            command("get-weather", "Get the weather."),
            command("ground-crew", "Call the crew."),
        ),
        semantic=(model, 0.25),
    )
    hits = {path: score for score, path, _ in index.search("plane tickets", 5)}  # no word matches: the model finds
    assert hits == pytest.approx({"book-flight": 0.25, "get-weather": 0.25 * 0.6})
    hits = {path: score for score, path, _ in index.search("weather", 5)}
    assert hits == pytest.approx({"get-weather": 0.75 + 0.25, "book-flight": 0.25 * 0.6})  # words 3/4, model 1/4
    hits = {path: score for score, path, _ in index.search("rain", 5)}  # scaled by the closest command's cosine
    assert hits == pytest.approx({"get-weather": 0.25, "book-flight": 0.25 * 0.8 / 0.96})
    assert len(model.calls) == 4 and model.calls[0][:2] == [
        "book flight: Book a flight. ",  # the path's words, summary, description (and parameters' names)
        "get weather: Get the weather. ",
    ]
    index.search("the", 5)
    assert len(model.calls) == 4  # only stop words: nothing to ask the model


def test_a_result_scoring_half_the_best_is_still_strong():
    class Halves(FakeModel):
        def vectors(self, texts):
            import numpy as np

            self.calls.append(list(texts))
            return np.array(
                [
                    [1.0, 0.0] if "one" in t or "uno" in t else [0.5, 0.75**0.5] if "half" in t else [0.0, 1.0]
                    for t in texts
                ]
            )

    model = Halves()
    index = Index(
        tree(command("one", description="x" * 299 + "yz"), command("half"), command("less")), semantic=(model, 0.5)
    )
    assert [(path, score) for score, path, _ in index.search("uno", None)] == [("one", 0.5), ("half", 0.25)]
    assert model.calls[0][0] == "one: " + " " + "x" * 299 + "y"  # the description's first 300 characters


def test_a_model_that_fails_leaves_search_to_words_saying_so_once(caplog):
    class Broken(FakeModel):
        def vectors(self, texts):
            raise embeddings.Unusable("no server")

    index = Index(tree(command("get-weather", "Get the weather.")), semantic=(Broken(), 0.5))
    with caplog.at_level(logging.WARNING, logger="mcp_cli"):
        first = index.search("weather", 5)
        second = index.search("weather", 5)
    assert [p for _, p, _ in first] == [p for _, p, _ in second] == ["get-weather"]
    assert index.semantic is None and first[0][0] == second[0][0]
    assert [r.getMessage() for r in caplog.records] == ["embedding model fake: no server; search ranks by words only"]


@pytest.mark.parametrize(
    ("query", "words", "ops", "names"),
    [
        ("create an issue", [{"issu"}], ["@create"], []),  # the leading verb is an operation, not a word
        ("file a bug about the login page", [{"bug", "issu"}], ["@create"], []),  # what to write: no word
        ("add a note about it to the board", [{"note", "comment"}, {"board", "project"}], ["@create"], []),
        ("Open a ticket with Zendesk", [{"ticket", "issu"}, {"zendesk"}], ["@create", "@get"], ["zendesk"]),
        (
            "Search PagerDuty for API incidents",
            [{"pagerduti"}, {"api"}, {"incid", "alert", "outag"}],
            ["@search"],
            ["pagerduti"],
        ),  # a name as the query's words are read; `API` is no name
        ("Assign PLATFORM-456 to Craig", [{"platform"}, {"456"}, {"craig"}], ["@assign"], ["craig"]),
        ("Buy an Xbox", [{"buy"}, {"xbox"}], [], ["xbox"]),  # not an operation: a word
        ('Check Apple\'s price on "Nasdaq"?', [{"appl"}, {"price", "cost"}, {"nasdaq"}], ["@get"], ["appl", "nasdaq"]),
    ],
)
def test_a_query_s_words_operations_and_names(query, words, ops, names):
    found = read(query)
    assert [set(w) for _, w in found.words] == words and found.ops == ops and found.names == names


@pytest.mark.parametrize(
    ("query", "things"),
    [
        ("check my bank account balance", {"bank": True, "account": True, "balance": True}),
        ("open the ticket", {"ticket": True}),  # the leading verb is an operation, no word
        ("list open tickets", {"open": False, "tickets": True}),  # a verb of the lexicon names no thing
        ("Status of flight UA-123 at 7am", {"status": True, "flight": True, "ua": False, "123": False, "7am": False}),
        (
            "search 'rate limiting' in sixdegree-ai/platform",  # quoted, or with inner `/.:@_#`: values
            {"rate": False, "limiting": False, "sixdegree": False, "ai": False, "platform": False},
        ),
        ("email jane.doe@acme.com", {"jane": False, "doe": False, "acme": False, "com": False}),
        ("find what's in the customer's e-signature", {"customer": True, "signature": True}),  # a lone letter: none
    ],
)
def test_which_words_of_a_query_name_things(query, things):
    found = read(query)
    assert {term: thing for (term, _), thing in zip(found.words, found.things, strict=True)} == things


def fitting(*commands: Command) -> Index:
    return Index(tree(*commands))


def test_a_command_fits_by_the_rarity_of_the_words_it_shares_as_if_among_few_commands_at_least():
    index = fitting(command("get-forecast", "Get the weather forecast."), command("get-user", "Get a user."))
    rare = index.rarity("forecast")
    assert rare == pytest.approx(math.log(1 + 99.5 / 1.5))  # two commands, told as FEW (100)
    assert index.rarity("") == pytest.approx(math.log(1 + (ranking.FEW + 0.5) / 0.5))  # a word of none: the most
    assert index.fits("weather forecast", "get-forecast") == pytest.approx(2 * rare / index.rarity(""))
    assert index.fits("weather forecast", "get-forecast") >= ranking.WEAK > index.fits("user", "get-forecast")
    assert index.fits("forecast", "get-forecast") >= ranking.WEAK == 0.3  # one rare word shared is enough


def test_a_command_s_word_counts_once_however_many_words_of_the_query_reach_it():
    index = fitting(command("create-event", "Create an event."), command("get-user", "Get a user."))
    once = index.fits("event", "create-event")  # a calendar is an event too (lexicon.SYNONYMS): no second event
    assert once > 0 and index.fits("event calendar", "create-event") == pytest.approx(once)


def test_no_command_fits_without_hits_or_when_the_best_fits_under_weak():
    index = fitting(command("get-forecast", "Get the weather forecast."), command("get-user", "Get a user."))
    assert index.misses("anything", [])
    assert not index.misses("weather forecast", index.search("weather forecast"))
    [hit] = index.search("weather forecast", 1)
    assert index.fits("user", hit[1]) < ranking.WEAK and index.misses("user", [hit])  # a hit, but a weak one


def test_a_word_only_a_command_s_description_or_parameters_have_counts_less():
    index = fitting(
        command("get-forecast", "Get the weather forecast.", description="Forecast for a city's address."),
        command("get-user", "Get a user.", params=[Param("address", "string")]),
        command("get-address", "Get a postal address."),
    )
    full = index.rarity("address") / index.rarity("")
    assert index.fits("address", "get-address") == pytest.approx(full)  # in its name and summary
    assert index.fits("address", "get-forecast") == pytest.approx(ranking.BODY_WEIGHT * full)  # its description
    assert index.fits("address", "get-user") == pytest.approx(ranking.BODY_WEIGHT * full)  # a parameter's name


def test_a_query_that_names_a_command_finds_it_first_and_fits_it_fully():
    me = command("get-me", "Get details of the authenticated user.", aliases=["get_me"])
    issues = Group("issues", children=[command("list", "List issues.")])
    index = Index(tree(Group("hub", children=[me, command("get-label", "Get a label."), issues])))
    for query in ("get_me", "getMe", "get me", "hub get-me"):  # stop words aside, its only words are a verb
        hits = index.search(query)
        assert hits[0][1] == "hub get-me" and index.fits(query, "hub get-me") == 1.0
        assert not index.misses(query, hits)
    assert index.search("issues list")[0][1] == "hub issues list"  # its path without the domain names it too
    assert index.fits("list", "hub issues list") < 1.0  # a nested command's own name alone names no command
    assert index.fits("get me a label", "hub get-me") < 1.0  # a query that only contains a name is read by words


def test_a_detail_or_a_name_the_tree_never_heard_of_leaves_a_good_match_fitting():
    index = fitting(
        command("create-ticket", "Create a support ticket."),
        command("get-address", "Get a postal address."),
        command("get-forecast", "Get the weather forecast.", description="Forecast for a city's address."),
        command("list-widgets", "Show all of them."),
        command("get-user", "Get a user."),
    )
    assert index.fits("create a ticket in Zendesk", "create-ticket") >= ranking.WEAK  # a service named in passing
    assert index.fits("address of the warehouse", "get-address") >= ranking.WEAK  # one detail unheard of
    assert index.fits("address", "get-forecast") < index.fits("address", "get-address")  # in passing: less
    assert index.fits("widgets", "list-widgets") == pytest.approx(index.rarity("widget") / index.rarity(""))  # its name


def test_a_shared_word_counts_by_its_own_rarity_not_the_command_s_rarest():
    index = fitting(command("get-user", "Get a user."), command("list-users", "List users."))
    common = index.rarity("user")  # in both commands
    assert index.fits("user", "get-user") == pytest.approx(common / index.rarity(""))


def test_a_query_s_operation_counts_with_a_shared_word_or_at_most_one_unheard_of_word():
    index = fitting(command("restart-service", "Restart a service."), command("get-user", "Get a user."))
    op = index.rarity("@restart") / index.rarity("")
    assert index.fits("restart it", "restart-service") == pytest.approx(op)  # no word: the operation alone
    assert index.fits("restart it at 7am", "restart-service") == pytest.approx(op)  # a value unheard of: no thing
    assert index.fits("restart it quickly", "restart-service") == pytest.approx(op - ranking.UNHEARD_COST)
    # two unheard-of words: the request is about them, not this command's operation
    assert index.fits("restart my robot vacuum", "restart-service") == pytest.approx(-2 * ranking.UNHEARD_COST)


def test_each_unheard_of_thing_costs_the_fit_up_to_a_few():
    index = fitting(command("get-user", "Get a user account."), command("list-repos", "List repositories."))
    plain = index.fits("get the account", "get-user")
    assert plain - index.fits("get the account balance", "get-user") == pytest.approx(ranking.UNHEARD_COST)
    most = ranking.UNHEARD_MOST * ranking.UNHEARD_COST
    assert plain - index.fits("get the bank account balance", "get-user") == pytest.approx(most)
    assert plain - index.fits("get the savings bank account balance", "get-user") == pytest.approx(most)
    assert index.fits("get the account of repo 4471", "get-user") == pytest.approx(plain)  # a value, a known word


def test_a_name_or_a_value_never_counts_against_a_fit():
    index = fitting(command("send-message", "Send a message to a team channel."), command("get-user", "Get a user."))
    plain = index.fits("send a message to the team", "send-message")
    assert index.fits("send a message to Sarah on the team", "send-message") == pytest.approx(plain)
    assert index.fits("send a message to the team Alpha or Beta", "send-message") == pytest.approx(plain)
    assert index.fits("send a message to the team about 'Zorblax rollout' at 7am", "send-message") >= plain


def test_a_typo_reads_as_the_word_it_is_close_to():
    index = fitting(
        command("list-pull-requests", "List open pull requests."),
        command("get-user", "Get a user."),
        command("close-issue", "Close an issue."),
    )
    assert index.clean("list the opne pull reqeusts on acme/biling") == "list the open pull requests on acme/biling"
    assert [p for _, p, _ in index.search("lsit the pull reqeusts", 1)] == ["list-pull-requests"]
    assert index.fits("list the opne pull reqeusts", "list-pull-requests") == pytest.approx(
        index.fits("list the open pull requests", "list-pull-requests")
    )
    assert not index.misses("colse the isue", index.search("colse the isue"))
    assert index.clean("ask Jonh about the bnak") == "ask Jonh about the bnak"  # a name; a word too short to tell


def test_the_spelling_vocabulary_prefers_the_nearest_then_the_commoner_word():
    vocabulary = spelling.Vocabulary({"open": 3, "oven": 1, "back": 2, "repository": 1, "generators": 1})
    assert vocabulary.correct("opne") == "open"  # a swap of neighbours is one edit
    assert vocabulary.correct("bank") == "bank"  # four letters: corrected only by a swap
    assert vocabulary.correct("repositroy") == "repository"
    assert vocabulary.correct("genrators") == "generators"
    assert vocabulary.correct("gnratrs") == "gnratrs"  # three edits: no word is near
    vocabulary = spelling.Vocabulary({**vocabulary.counts, "resolved": 2, "empty": 1, "archive": 1})
    assert vocabulary.correct("unresolved") == "unresolved"  # a prefix turns it round: no typo of `resolved`
    assert vocabulary.correct("nonempty") == "nonempty" and vocabulary.correct("resolvde") == "resolved"
    assert vocabulary.correct("archived") == "archive"  # an ending is: a slip of the keys, or a form of it
    vocabulary.extend(["repositor"])  # a word of the language is never read as a typo
    assert vocabulary.correct("repositor") == "repositor"
    assert spelling.distance("opne", "open") == 1 and spelling.distance("kitten", "sitting", most=5) == 3


def test_an_embedding_model_judges_the_fit_by_how_far_its_best_cosine_leads_and_the_operation():
    tools = (
        command("book-flight", "Book a flight."),
        command("get-weather", "Get the weather."),
        command("ground-crew", "Call the ground crew."),
    )
    words, model = fitting(*tools), FakeModel()
    judged = Index(tree(*tools), semantic=(model, 0.0))  # weight 0: the model judges, words rank
    lead = 1.0 - (-1.0)  # plane and flight: the same vector; the ground: the opposite, the last of few commands
    assert judged.lead("book a plane seat") == pytest.approx(lead)
    assert judged.fits("book a plane seat", "book-flight") == pytest.approx(
        words.fits("book a plane seat", "book-flight") + ranking.GAP_WEIGHT * lead
    )
    calls = len(model.calls)
    judged.fits("book a plane seat", "get-weather")
    assert len(model.calls) == calls  # the same query again: its cosines are kept
    # an operation the command lacks, where it has operations of its own, costs OP_COST
    assert judged.fits("delete the weather", "get-weather") == pytest.approx(
        words.fits("delete the weather", "get-weather")
        + ranking.GAP_WEIGHT * judged.lead("delete the weather")
        - ranking.OP_COST
    )
    ranking_too = Index(tree(*tools), semantic=(FakeModel(), 0.5))  # a model that ranks judges misses too
    hits = ranking_too.search("the plane flight")
    assert hits[0][1] == "book-flight" and not ranking_too.misses("the plane flight", hits)


def test_a_miss_names_the_words_of_things_no_command_knows():
    index = fitting(command("get-user", "Get a user account."), command("list-repos", "List repositories."))
    assert index.no_fit("Check my bank account balance at 7am") == (
        "No command fits 'Check my bank account balance at 7am'; none knows bank, balance."  # not a value: `7am`
    )
    assert index.no_fit("get the account") == "No command fits 'get the account'."


def test_an_english_title_reaches_search_where_the_description_is_in_another_script():
    from mcp_cli.sources import mcp_tools

    tool = {"name": "doc_query", "title": "Search documents", "description": "搜索云文档。"}
    found = mcp_tools.command("feishu", tool)
    assert found.description == "Search documents. 搜索云文档。"
    kept = mcp_tools.command("gh", {"name": "list_issues", "title": "Issues", "description": "List issues."})
    assert kept.description == "List issues."  # a description a reader of English can read stays as it is
    index = fitting(found, command("get-user", "Get a user."))
    assert [p for _, p, _ in index.search("search the documents", 1)] == ["doc-query"]
