"""The reliability suite at CI size: 2,000 generated calls, every fault, 100 concurrent HTTP sessions and the
malformed-skill corpus, each at its ideal (bench/reliability.py; `python -m bench.reliability --long` for more)."""

from bench import reliability


def test_reliability_suite_is_at_its_ideal():
    results = reliability.run(argv=2000, sessions=100)
    lines, targets = reliability.report(results)
    print("\n".join(lines + targets))
    assert sum(r["calls"] for r in results["argv"]) == 2000
    assert len(results["faults"]) == len(reliability.FAULTS) and results["http"]["sessions"] == 100
    assert reliability.verdicts(results) == {"argv": True, "faults": True, "http": True, "malformed": True}, targets


def test_the_verdicts_see_a_flaw():
    """A traceback, an orphan, a lost session: each turns its own verdict, and only that one."""
    argv = [{"calls": 2000, "answered": 2000, "not enveloped": 0, "internal": 0, "tracebacks": 1,
             "server deaths": 0, "orphans": 0}]  # fmt: skip
    faults = [{"calls": 3, "answered": 3, "as due": 3, "healthy after": True, "tracebacks": 0, "orphans": 1}]
    http = {"sessions": 100, "answered": 99, "lost": 1, "crossed": 0, "server alive": True, "orphans": 0}
    malformed = {"skills": 39, "other failures": 0}
    verdicts = reliability.verdicts({"argv": argv, "faults": faults, "http": http, "malformed": malformed})
    assert verdicts == {"argv": False, "faults": False, "http": False, "malformed": True}
    argv[0]["tracebacks"], faults[0]["orphans"], http["answered"] = 0, 0, 100
    assert all(reliability.verdicts({"argv": argv, "faults": faults, "http": http, "malformed": malformed}).values())
