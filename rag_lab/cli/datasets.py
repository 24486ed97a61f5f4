def add_arguments(parser):
    pass


def run(args) -> int:
    from ..datasets import available_datasets

    for name, desc in available_datasets().items():
        print(f"{name}\t{desc}" if desc else name)
    return 0
