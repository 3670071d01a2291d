"""An example Python file."""


# start example
class MyClass:
    """An example class."""

    def __init__(self, x: int, y: int):
        """An example method."""
        self.x = x
        self.y = y


# end example

a = 1
