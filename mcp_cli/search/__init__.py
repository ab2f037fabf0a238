"""`search WORDS...` over a tree's commands: BM25 ranking (`ranking`), its vocabulary (`lexicon`) and optional
embeddings (`embeddings`)."""
