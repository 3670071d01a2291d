"""The kinds of external retriever, one module each: its entry (a pydantic model keyed by ``kind``) and its
client. The list of kinds the retrievers file accepts is ``ENTRY_TYPES`` in ``external/retrievers_file.py``."""
