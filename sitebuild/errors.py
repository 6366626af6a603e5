"""The one error of the build."""


class BuildError(Exception):
    """A build step cannot go on; the message says what is wrong and how to fix it."""
