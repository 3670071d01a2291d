"""From a document folder to chunks: the corpus snapshot, extraction to one canonical text per
document (HTML, Markdown, reStructuredText, PDF, text, BEIR corpus files), and the chunking strategies."""
