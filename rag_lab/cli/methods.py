def add_arguments(parser):
    pass


def run(args) -> int:
    from ..methods import available_methods

    for name, desc in available_methods().items():
        print(f"{name}\t{desc}")
    return 0
