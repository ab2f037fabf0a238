"""The reliability suite at CI size: 2,000 generated calls split over stdio, the meta-tools and OpenAPI, odd JSON-RPC
ids, runaway filters, every fault, 100 concurrent HTTP sessions and the malformed-skill corpus, each at its ideal
(bench/reliability.py; `python -m bench.reliability --long` for more)."""

import copy
import json

from bench import reliability

PARTS = ("stdio", "meta", "openapi", "json-rpc ids", "runaway", "faults", "http", "malformed")


def test_reliability_suite_is_at_its_ideal():
    results = reliability.run(argv=2000, sessions=100)
    lines, targets = reliability.report(results)
    print("\n".join(lines + targets))
    assert sum(r["calls"] for r in results["argv"]) == 2000
    assert {r["surface"] for r in results["argv"]} == set(reliability.SURFACES)
    assert len(results["faults"]) == len(reliability.FAULTS) and results["http"]["sessions"] == 100
    assert reliability.verdicts(results) == dict.fromkeys(PARTS, True), targets


def _flawless() -> dict:
    calls = {
        "calls": 700,
        "answered": 700,
        "not enveloped": 0,
        "internal": 0,
        "tracebacks": 0,
        "canaries": 0,
        "server deaths": 0,
        "orphans": 0,
    }
    return {
        "argv": [{"surface": surface, **calls} for surface in reliability.SURFACES],
        "ids": [
            {"surface": s, "requests": 15, "replied": 15, "as due": 15, "tracebacks": 0, "server deaths": 0}
            for s in ("stdio", "meta")
        ],
        "runaway": [
            {"surface": s, "filters": 3, "timeouts": 3, "help first": 3, "tracebacks": 0, "server deaths": 0}
            for s in reliability.SURFACES
        ],
        "faults": [{"calls": 3, "answered": 3, "as due": 3, "healthy after": True, "tracebacks": 0, "orphans": 0}],
        "http": {
            "sessions": 100,
            "answered": 100,
            "lost": 0,
            "crossed": 0,
            "failed": {"timeout": 2},  # a busy machine's refusals: not a flaw
            "server alive": True,
            "orphans": 0,
        },
        "malformed": {"skills": 39, "other failures": 0},
    }


def test_the_verdicts_see_a_flaw():
    """Each flaw turns its own verdict, and only that one: on a surface, a call outside the envelope, an internal
    error, a traceback, a canary, a death, an orphan, an unanswered call, too few calls; an odd id with no reply, or
    replied otherwise; a runaway filter that is no timeout, or answered before a --help; a fault, a lost session."""
    assert reliability.verdicts(_flawless()) == dict.fromkeys(PARTS, True)
    flaws = [
        ("stdio", lambda r: r["argv"][0].update({"not enveloped": 1})),
        ("meta", lambda r: r["argv"][1].update({"canaries": 1})),
        ("openapi", lambda r: r["argv"][2].update({"internal": 1})),
        ("openapi", lambda r: r["argv"][2].update({"tracebacks": 1})),
        ("meta", lambda r: r["argv"][1].update({"server deaths": 1})),
        ("stdio", lambda r: r["argv"][0].update({"orphans": 1})),
        ("stdio", lambda r: r["argv"][0].update({"answered": 699})),
        ("openapi", lambda r: r["argv"][2].update({"calls": 600, "answered": 600})),
        ("json-rpc ids", lambda r: r["ids"][0].update({"replied": 14, "as due": 14})),
        ("json-rpc ids", lambda r: r["ids"][1].update({"as due": 14})),
        ("runaway", lambda r: r["runaway"][2].update({"timeouts": 2})),
        ("runaway", lambda r: r["runaway"][0].update({"help first": 2})),
        ("faults", lambda r: r["faults"][0].update({"orphans": 1})),
        ("http", lambda r: r["http"].update({"answered": 99, "lost": 1})),
        ("http", lambda r: r["http"].update({"crossed": 1})),
        ("http", lambda r: r["http"].update({"failed": {"internal": 1}})),  # a refusal that is no busy machine's
        ("malformed", lambda r: r["malformed"].update({"other failures": 1})),
    ]
    for part, flaw in flaws:
        results = copy.deepcopy(_flawless())
        flaw(results)
        assert reliability.verdicts(results) == {p: p != part for p in PARTS}, part


def test_the_calls_carry_the_probe_s_inputs_to_each_surface():
    """One argv becomes the meta-tools' call_tool (options as typed values, reserved options as fields, the stages
    after `|` as `then`); generated calls hold every kind of hostile input; a canary in any answer is seen."""
    from mcp_cli.sources.loader import load

    tree = load(str(reliability.FIXTURES / "faults" / "tree.json"))
    words = reliability.Vocabulary(tree, lambda n: ["py", "odd", "--depth", str(n)])
    argv = [
        "--budget",
        "١٢",
        "py",
        "typed",
        "--count",
        "3",
        "--ratio=0.5",
        "--tag",
        "a",
        "-v",
        "-v",
        "--no-color",
        "|",
        "jq",
        "env",
        "|",
        "head",
        "²",
    ]
    assert words.meta(argv) == {
        "name": "py typed",
        "arguments": {"count": 3, "ratio": 0.5, "tags": ["a"], "verbose": 2, "color": False},
        "then": "jq env | head '²'",
        "budget": "١٢",
    }
    more = words.meta(["--more", "k:²", "py", "odd", "--depth", "9" * 4301])
    assert more["name"] == "--more 'k:²' py odd" and more["arguments"]["depth"] == 10**4301 - 1  # a JSON integer
    assert words.as_call("openapi", ["--help"]).arguments == {"argv": ["--help"]}
    rng = reliability.random.Random(3)
    with reliability.big_integers():
        calls = [words.call(s, rng).arguments for s in reliability.SURFACES for _ in range(400)]
        said = json.dumps(calls, default=repr, ensure_ascii=False)
    for probe in ["| jq env", "input_filename", "١٢", "1e309", "9" * 4301, "a" * 64_000, '--depth", "100000"']:
        assert probe.replace("| ", '"|", "') in said or probe in said, probe
    canary = reliability.CANARIES["SOME_TOKEN"]
    assert reliability.leaked(reliability.Answer({"output": f"x{canary}"}, [])) == ["SOME_TOKEN"]
