"""The one exception type the CLI turns into a clear message and a non-zero exit."""


class XnfError(Exception):
    """A user-facing error: the message says what was wrong and what to do."""
