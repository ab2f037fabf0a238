"""Optional semantic search (`MCP_CLI_EMBEDDINGS`): WordLlama's bundled model, all-MiniLM-L6-v2 (numpy's forward
pass of the real weights, `bert.py`), and an OpenAI-compatible embeddings endpoint (a real HTTP server answering with
WordLlama's vectors), through served sessions and `mcp-cli run`; when the model cannot be used, search goes on by
words and says why once."""

import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from mcp_cli.search import embeddings
from mcp_cli.testing import ok

from .conftest import ROOT, budget, served
from .listed import config, entry

pytestmark = pytest.mark.anyio

TOOLS = ("send_email", "restart_server", "get_weather_forecast", "translate_text", "play_music", "list_issues")


@pytest.fixture
def team(tmp_path):
    return config(tmp_path / "team.json", {"desk": entry(*TOOLS)})


@pytest.fixture
def cache(tmp_path):
    return {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture
def endpoint():
    """The fixture endpoint's process and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fixtures" / "embeddings_server.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc, f"http://127.0.0.1:{proc.stdout.readline().strip()}/v1"
    finally:
        proc.kill()
        proc.wait()


def first(hits: str) -> str:
    """The first command listed, as a match or, where no command fits, as the closest."""
    return next(line for line in hits.splitlines() if not line.startswith(("No command", "    "))).split()[1]


async def test_with_the_model_off_words_that_share_nothing_with_a_command_find_nothing(team, cache):
    async with served("serve", str(team), env={**cache, "MCP_CLI_EMBEDDINGS": "none"}) as client:
        assert "No command fits" in await ok(client, command="search will it rain tomorrow")


async def test_the_bundled_model_ranking_finds_commands_that_share_no_word_with_the_request(team, cache):
    weighed = {**cache, "MCP_CLI_EMBEDDINGS_WEIGHT": "0.3"}  # the default model, given a share of the ranking
    async with served("serve", str(team), env=weighed) as client:
        assert first(await ok(client, command="search will it rain tomorrow")) == "get-weather-forecast"
        assert first(await ok(client, command="search say this in french")) == "translate-text"
        assert first(await ok(client, command="search list the issues")) == "list-issues"  # words still count
        assert "No command fits" in await ok(client, command="search can you please help me")  # stop words only


async def test_an_openai_compatible_endpoint_is_asked_for_the_configured_model(team, cache, endpoint):
    proc, url = endpoint
    env = {
        **cache,
        "MCP_CLI_EMBEDDINGS": url,
        "MCP_CLI_EMBEDDINGS_MODEL": "nomic-embed-text",
        "MCP_CLI_EMBEDDINGS_WEIGHT": "0.5",
    }
    async with served("serve", str(team), env=env) as client:
        assert first(await ok(client, command="search will it rain tomorrow")) == "get-weather-forecast"
        assert first(await ok(client, command="search turn the box off and on again")) == "restart-server"
    asked = [proc.stdout.readline().split() for _ in range(3)]  # the commands (one batch), then each query
    assert asked == [["nomic-embed-text", str(len(TOOLS))], ["nomic-embed-text", "1"], ["nomic-embed-text", "1"]]


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"MCP_CLI_EMBEDDINGS": "http://127.0.0.1:9/v1", "MCP_CLI_EMBEDDINGS_MODEL": "m"}, "127.0.0.1:9/v1/embeddings"),
        ({"MCP_CLI_EMBEDDINGS": "http://127.0.0.1:9/v1"}, "set MCP_CLI_EMBEDDINGS_MODEL"),
        ({"MCP_CLI_EMBEDDINGS": "bert"}, "not `wordllama`, `minilm`, a model's folder nor the http(s) URL"),
        ({"MCP_CLI_EMBEDDINGS": str(ROOT / "tests")}, "holds no usable BERT sentence-transformers model"),
        ({"MCP_CLI_EMBEDDINGS": "wordllama", "MCP_CLI_EMBEDDINGS_WEIGHT": "2"}, "not a number from 0 to 1"),
    ],
)
def test_a_model_that_cannot_be_used_leaves_search_to_words_and_says_why(team, cache, env, why):
    # not a command's name (`list issues`), which fits it without the model
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", str(team), "--", "search", "list the open issues"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **cache, **env},
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split()[1] == "list-issues"
    (warning,) = [line for line in proc.stderr.splitlines() if "search ranks by words only" in line]
    assert warning.startswith("warning: ") and why in warning and "Traceback" not in proc.stderr


def test_the_model_is_loaded_by_the_first_search_never_at_start(team, cache):
    """A served tree whose agent never searches imports neither WordLlama nor numpy; the first search does."""
    script = f"""
import sys, anyio
from mcp_cli.testing import ainvoke
from mcp_cli.sources.loader import load
async def main():
    tree = load({str(team)!r})
    await ainvoke(tree, "--help")
    before = {{"wordllama", "numpy"}} & set(sys.modules)
    await ainvoke(tree, "search will it rain tomorrow")
    print(sorted(before), "wordllama" in sys.modules)
anyio.run(main)
"""
    env = {k: v for k, v in os.environ.items() if k != "MCP_CLI_EMBEDDINGS"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**env, **cache}, timeout=budget(120)
    )
    assert out.stdout.split("\n")[0] == "[] True", out.stderr


def test_minilm_in_numpy_gives_sentence_transformers_own_similarities():
    """The figures sentence-transformers' quickstart prints for all-MiniLM-L6-v2 (its torch forward pass), within
    1e-4 (GELU in its tanh form; 5e-6 with the exact one): tokenizer, every layer, mean pooling and unit length as it
    computes them."""
    model = embeddings.load("minilm")
    v = model.vectors(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert np.allclose(v @ v.T, [[1, 0.666, 0.1046], [0.666, 1, 0.1411], [0.1046, 0.1411, 1]], atol=1e-4)
    alone = model.vectors(["He drove to the stadium."])  # padded in a batch or not, the same vector
    assert np.allclose(alone[0], v[2], atol=1e-5)
    assert {"weather", "stadium", "forecast"} <= model.words() and not any(w.startswith("##") for w in model.words())
    package = Path(find_spec(embeddings.MINILM_PACKAGE).origin).parent  # the same model, named by its folder
    folder = package / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2"
    assert np.allclose(embeddings.load(str(folder)).vectors(["He drove to the stadium."]), alone, atol=1e-6)


def test_a_slow_model_keeps_its_command_vectors_on_disk_and_reads_them_back(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CLI_CACHE_DIR", str(tmp_path))
    texts = ["send an email", "restart the server", "translate text"]
    made = embeddings.load("minilm").kept(texts)
    (stored,) = tmp_path.glob("embeddings-*.npz")
    written = stored.stat().st_mtime_ns
    again = embeddings.load("minilm")  # another model object: as in the next process, nothing in memory
    assert np.array_equal(again.kept(texts[::-1]), made[::-1]) and stored.stat().st_mtime_ns == written
    assert np.allclose(again.kept(["play music"])[0], again.vectors(["play music"])[0], atol=1e-6)
    assert stored.stat().st_mtime_ns != written  # a new text: computed, and kept too
    stored.write_bytes(b"not a numpy file")  # damaged: computed anew, never a failed search
    assert np.allclose(embeddings.load("minilm").kept(texts), made, atol=1e-6)


def test_minilm_takes_its_own_share_of_the_ranking_unless_one_is_configured(monkeypatch):
    monkeypatch.setenv("MCP_CLI_EMBEDDINGS", "minilm")
    monkeypatch.delenv("MCP_CLI_EMBEDDINGS_WEIGHT", raising=False)
    embeddings.configured.cache_clear()
    try:
        model, share = embeddings.configured() or (None, None)
        assert model is not None and model.name == "minilm" and share == embeddings.MINILM_WEIGHT > 0
        monkeypatch.setenv("MCP_CLI_EMBEDDINGS_WEIGHT", "0.5")
        embeddings.configured.cache_clear()
        assert (embeddings.configured() or (None, None))[1] == 0.5
    finally:
        embeddings.configured.cache_clear()


async def test_minilm_ranks_and_judges_the_miss_in_a_served_session(team, cache):
    env = {**cache, "MCP_CLI_EMBEDDINGS": "minilm"}  # at its own share of the ranking
    async with served("serve", str(team), env=env) as client:
        assert first(await ok(client, command="search will it rain tomorrow")) == "get-weather-forecast"
        assert first(await ok(client, command="search turn the box off and on again")) == "restart-server"
        assert first(await ok(client, command="search put on some tunes")) == "play-music"
        assert "No command fits" in await ok(client, command="search book a table for two tonight")
