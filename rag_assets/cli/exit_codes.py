"""The exit statuses of ``rag-assets`` (README: exit statuses)."""

EXIT_OK = 0
EXIT_FAILED = 1  # a run, a check or a command failed
EXIT_USAGE = 2  # bad usage: nothing ran
EXIT_REFUSED = 3  # `ask --strict`: the index said NO ANSWER
EXIT_NO_RESULTS = 4  # nothing to report yet: no evaluation has written results to this storage folder
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM
