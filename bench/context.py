"""Context-driven disclosure: search on Boundary's 32 ambiguous prompts, without context and after one context call.

Each prompt is preceded by one call, made through the runtime with a session context as a served call would be:
a command of the expected tool's service (its first one, in tree order, that is not the expected tool, acts on an
entity type and needs no other argument) with a sample value of that type (`acme/api`, `ENG-423`, `production`). The
upstreams are not running, so the call itself fails; what it names is recorded all the same, as for any call that
reaches its command. A service none of whose tools' parameters the inference table knows gets no context call. As a
control, the same prompts after a misleading context call: to the next service (in corpus order) that has one.
The boost (`search.CONTEXT_BOOST`, 1.5) was chosen on these prompts: 1.25 gives Recall@1 .625, any boost from 1.5 on
.719, and the larger the boost, the more a misleading context costs (.281 at 1.5, .125 when context decides alone)."""

from __future__ import annotations

from typing import Any

import anyio

from mcp_cli.engine.runtime import Runtime
from mcp_cli.entities import Context
from mcp_cli.handlers import CallScope
from mcp_cli.search.ranking import Index
from mcp_cli.surfaces.meta_tools import argv
from mcp_cli.text import kebab
from mcp_cli.tree import Command, Group, Tree

from .corpora import Corpus
from .economy import tree_of
from .quality import DEPTH, metrics

SAMPLES = {
    "repository": "acme/api",
    "issue": "ENG-423",
    "project": "ENG",
    "namespace": "production",
    "channel": "deploys",
    "organization": "acme",
    "workspace": "api-prod",
    "team": "platform",
    "incident": "P1234",
    "space": "ENG",
    "cluster": "prod-1",
    "bucket": "acme-logs",
    "container": "api-1",
    "dashboard": "api-overview",
    "page": "runbook-1",
}


def context_call(tree: Tree, service: str, expected: str) -> list[str] | None:
    """The argv of the context call to a service; None when the service has none."""
    group = tree.root.child(kebab(service))
    assert isinstance(group, Group)
    for path, cmd in Tree(group).walk():
        if not isinstance(cmd, Command) or not cmd.entities or cmd.handler.tool == expected:
            continue
        kind, names = next(iter(cmd.entities.items()))
        required = set((cmd.schema or {}).get("required", []))
        if required <= set(names):
            value = SAMPLES[kind]
            parts = value.split("/") if len(names) > 1 else [value]
            return [group.name, *path, *argv(cmd, dict(zip(names, parts, strict=False)))]
    return None


async def _ranks(corpus: Corpus, misleading: bool) -> list[dict[str, Any]]:
    tree = tree_of(corpus)
    index = Index(tree)
    services = [s for s, _ in corpus.servers]
    rows = []
    async with Runtime(tree) as runtime:
        for prompt, needed in corpus.tasks:
            service, tool = needed[0]
            order = services[services.index(service) + 1 :] + services[: services.index(service)]
            candidates = [s for s in order if context_call(tree, s, "")] if misleading else [service]
            call = context_call(tree, candidates[0], "" if misleading else tool) if candidates else None
            context = Context()
            if call is not None:
                await runtime.call(call, CallScope(context=context))
            rank = {}
            for label, prefer in (("without", []), ("with", context.domains())):
                found = index.search(prompt, DEPTH, prefer)
                hits = [(c.handler.server, c.handler.tool) for _, _, c in found]
                rank[label] = hits.index(needed[0]) + 1 if needed[0] in hits else None
            rows.append(
                {
                    "prompt": prompt,
                    "expected": tool,
                    "call": " ".join(call) if call else None,
                    "recorded": [e.value for e in context.entities],
                    **rank,
                }
            )
    return rows


def run(corpus: Corpus) -> dict[str, Any]:
    """Ranks of the expected tool of each prompt, without and with context (and with misleading context)."""
    rows = anyio.run(_ranks, corpus, False)
    wrong = anyio.run(_ranks, corpus, True)
    return {
        "rows": rows,
        "without": metrics([r["without"] for r in rows]),
        "with": metrics([r["with"] for r in rows]),
        "misled": metrics([r["with"] for r in wrong]),
        "prompts": len(rows),
        "context_calls": sum(1 for r in rows if r["recorded"]),
    }


def report(r: dict[str, Any]) -> list[str]:
    """A markdown table of the three measurements, the ratio, and each prompt's ranks."""

    def cell(key: str) -> str:
        m = r[key]
        return f"{m['recall@1']:.3f} | {m['recall@5']:.3f} | {m['mrr']:.3f}"

    ratio = r["with"]["recall@1"] / r["without"]["recall@1"] if r["without"]["recall@1"] else float("inf")
    lines = [
        "| search on the ambiguous prompts | Recall@1 | Recall@5 | MRR |",
        "|---|---|---|---|",
        f"| without context (baseline) | {cell('without')} |",
        f"| after one context call to the expected service | {cell('with')} |",
        f"| after one misleading context call (control) | {cell('misled')} |",
        "",
        f"Recall@1 with context / without: {r['with']['recall@1']:.3f} / {r['without']['recall@1']:.3f} = "
        f"{ratio:.2f}x, over {r['prompts']} prompts, {r['context_calls']} of them with a context call.",
        "",
        "| prompt | expected | context call | rank without | rank with |",
        "|---|---|---|---|---|",
    ]
    for row in r["rows"]:
        call = f"`{row['call']}`" if row["call"] else "(none: no entity parameter known)"
        lines.append(
            f"| {row['prompt']} | `{row['expected']}` | {call} | {row['without'] or '>50'} | {row['with'] or '>50'} |"
        )
    return lines


if __name__ == "__main__":
    from .corpora import boundary

    print("\n".join(report(run(boundary("ambiguous")))))
