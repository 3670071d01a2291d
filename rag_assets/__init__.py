"""rag_assets: measure a RAG retriever before anyone writes a prompt."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rag_assets")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
