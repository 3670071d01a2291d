"""Second stage with a sentence-transformers CrossEncoder (for instance ms-marco-MiniLM-L-6-v2).

No PyPI package carries cross-encoder weights and no model hub is reachable here, so it runs only
where the user configures a local model folder (``cross_encoder`` in the settings); without one,
its rows are absent and the report says so. It is never replaced by a model with an untrained head.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence


class CrossEncoderUnavailable(RuntimeError):
    pass


class PairScorer(Protocol):
    """What a second stage needs of a cross encoder: one relevance score per (query, text) pair."""

    def predict(self, pairs: Sequence[tuple[str, str]], show_progress_bar: bool = ...) -> Sequence[float]: ...


def load(path: str) -> PairScorer:
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise CrossEncoderUnavailable(
            f"cross encoder {path!r}: no model folder with config.json there; give the folder of a trained "
            "sentence-transformers CrossEncoder (for instance ms-marco-MiniLM-L-6-v2), or leave it unset")
    from sentence_transformers import CrossEncoder

    return CrossEncoder(str(folder), device="cpu")


def rerank(index, query: str, candidates: Sequence[int], k: int) -> tuple[list[int], list[float]]:
    scores = index.cross_encoder.predict([(query, index.texts[i]) for i in candidates], show_progress_bar=False)
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))[:k]
    return [candidates[i] for i in order], [float(scores[i]) for i in order]
