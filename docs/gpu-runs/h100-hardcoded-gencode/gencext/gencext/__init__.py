from gencext._C import add_one  # noqa: F401
