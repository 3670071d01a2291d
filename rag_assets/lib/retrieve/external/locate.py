"""Where a returned passage lies in the canonical document texts (``ingest.alignment``: exactly, folded, or at its
best approximate match), so an external hit has a ``#char=`` locator like ours; one that cannot be located is kept
and counted."""

from __future__ import annotations

from rag_assets.lib.ingest.alignment import LOCATED_RATIO, MIN_RUN, PLACES, SEED, Aligner, Located
from rag_assets.lib.retrieve.external.hits import Hit

__all__ = ["LOCATED_RATIO", "MIN_RUN", "PLACES", "SEED", "Located", "Locator"]


class Locator(Aligner):
    """Finds where a returned passage lies in the canonical texts (folded once per document)."""

    def locate(self, hit: Hit) -> Located:
        return self.align(hit.text, hit.doc_id)
