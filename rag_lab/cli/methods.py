"""``python -m rag_lab methods``: one line per registered method (name, the package it comes from,
description), the lab's own first, then those of installed plugins; a plugin that failed to load is
listed with its error (``rag_lab.core.plugins``)."""


def add_arguments(parser):
    pass


def run(args) -> int:
    from ..methods import available_methods
    from ..evaluation.retrievers import method_plugins, method_source

    for name, desc in available_methods().items():
        print(f"{name}\t{method_source(name)}\t{desc}")
    for plugin in method_plugins():
        if plugin.broken:
            print(f"{plugin.name}\t{plugin.package}\tBROKEN plugin {plugin.target}: {plugin.error}")
    return 0
