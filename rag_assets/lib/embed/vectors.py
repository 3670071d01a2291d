"""Vector arithmetic: unit length for the embedders and the ONNX graph's verification, and the checks
that stored vectors are what the retriever assumes (unit length, cosine = dot product).

For unit vectors ``||a - b||^2 / 2 == 1 - cos(a, b)``; if either side drifts, a distance threshold
calibrated in one form means something else in the other.
"""

from __future__ import annotations

import numpy as np


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))


def norm_deviation(vectors: np.ndarray) -> float:
    """Largest | ||v|| - 1 | over the rows."""
    if not len(vectors):
        return 0.0
    return float(np.max(np.abs(np.linalg.norm(vectors.astype(np.float64), axis=1) - 1.0)))


def distance_identity_gap(vectors: np.ndarray, pairs: int = 200, seed: int = 0) -> float:
    """Largest | ||a-b||^2/2 - (1 - cos(a,b)) | over ``pairs`` x ``pairs`` rows (a seeded sample).

    Computed in float32, as the retriever does.
    """
    if not len(vectors):
        return 0.0
    rng = np.random.default_rng(seed)
    left = vectors[rng.choice(len(vectors), size=min(pairs, len(vectors)), replace=False)].astype(np.float32)
    right = vectors[rng.choice(len(vectors), size=min(pairs, len(vectors)), replace=False)].astype(np.float32)
    squared = ((left[:, None, :] - right[None, :, :]) ** 2).sum(axis=2) / 2
    norms = np.linalg.norm(left, axis=1)[:, None] * np.linalg.norm(right, axis=1)[None, :]
    cosine = (left @ right.T) / norms
    return float(np.max(np.abs(squared - (1 - cosine))))
