"""``python -m rag_lab datasets``: the data sets that load by name (shipped folders, the lab's loaders,
installed plugins' loaders); a data-set plugin that failed to load is listed with its error."""


def add_arguments(parser):
    pass


def run(args) -> int:
    from ..datasets import available_datasets, dataset_plugins

    for name, desc in available_datasets().items():
        print(f"{name}\t{desc}" if desc else name)
    for plugin in dataset_plugins():
        if plugin.broken:
            print(f"{plugin.name}\tBROKEN plugin {plugin.target} (package {plugin.package}): {plugin.error}")
    return 0
