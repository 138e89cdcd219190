from toyext._C import add_one  # noqa: F401
