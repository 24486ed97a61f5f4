"""The ipywidgets face of ``rag_lab.explore.explorer``: dropdowns for dataset, method and question, a box to
type a question, sliders for k and the method's main knob, and the view as HTML below. A "flipped vs"
dropdown narrows the questions to those the method and another one disagree on at k (one finds gold
in its top k, the other does not), each labelled with the method that finds it.

The widget computes its default view when it is made, so a notebook run headlessly (papermill)
records it: the box's saved output carries that view as ``text/html`` beside the widget itself,
and a reader without a live kernel (an executed notebook, nbconvert's HTML, the run's report)
sees the default view where JupyterLab shows the live widget. Building a method on a change
happens in the kernel while the widget waits; its progress bar shows in the widget's log area.

The first view is computed without the log area (an ``ipywidgets.Output``): papermill's executor
(nbclient) mirrors an Output widget by sending comm messages on the shell channel while it waits
for the cell's reply on that same channel, and now and then it never sees the reply, so the run
hangs with the kernel idle (jupyter/nbclient issue 312). Only changes made in a live front end,
after the cell has run, use the log area.
"""
from __future__ import annotations

import ipywidgets as w

from ..core.types import Dataset
from .explorer import Explorer, ExplorerView, main_knob


class ExplorerBox(w.VBox):
    """A VBox whose display also offers the current view as HTML (see the module docstring)."""

    view_html = ""

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        if self.view_html:
            bundle["text/html"] = self.view_html
        return bundle


def _knob_slider(method: str, value=None) -> w.Widget:
    from ..evaluation.retrievers import registered_config

    knob = main_knob(method)
    if knob is None:
        return w.HTML(f"<i>{method} has no main knob</i>")
    default = getattr(registered_config(method), knob.name)
    integer = isinstance(default, int) and float(knob.step).is_integer()
    cls = w.IntSlider if integer else w.FloatSlider
    return cls(value=default if value is None else value, min=knob.minimum, max=knob.maximum, step=knob.step,
               description=knob.label, continuous_update=False, style={"description_width": "initial"},
               layout=w.Layout(width="420px"))


def _question_options(explorer: Explorer, dataset: str) -> list[tuple[str, str]]:
    return [(f"{q.id}: {q.question[:90]}", q.id) for q in explorer.dataset(dataset).questions]


ALL_QUESTIONS = "all questions"


def _flipped_options(explorer: Explorer, dataset: str, method: str, other: str, k: int) -> list[tuple[str, str]]:
    """Question options for the "flipped vs" choice: every question, or the flipped ones, labelled."""
    if other == ALL_QUESTIONS:
        return _question_options(explorer, dataset)
    return [(f"[{winner} finds gold] {qid}: {text[:80]}", qid) for qid, winner, text in
            explorer.flipped(dataset, method, other, k)]


def explorer_widget(explorer: Explorer, dataset: str, method: str = "naive", k: int = 5) -> ExplorerBox:
    """The explorer over ``explorer``'s datasets and methods, showing ``dataset`` / ``method`` / the first question."""
    wide = {"style": {"description_width": "initial"}, "layout": w.Layout(width="420px")}
    pick_data = w.Dropdown(options=list(explorer.datasets), value=dataset, description="dataset", **wide)
    pick_method = w.Dropdown(options=explorer.methods, value=method, description="method", **wide)
    pick_question = w.Dropdown(options=_question_options(explorer, dataset), description="question",
                               style={"description_width": "initial"}, layout=w.Layout(width="860px"))
    typed = w.Text(placeholder="…or type a question and press Enter", continuous_update=False,
                   description="your question", style={"description_width": "initial"}, layout=w.Layout(width="860px"))
    pick_k = w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False, **wide)
    flip_vs = w.Dropdown(options=[ALL_QUESTIONS] + explorer.methods, value=ALL_QUESTIONS,
                         description="flipped vs", **wide)
    knob_box = w.HBox([_knob_slider(method)])
    status, log, shown = w.HTML(), w.Output(), w.HTML()
    box = ExplorerBox([w.HBox([pick_data, pick_method]), w.HBox([flip_vs]), pick_question, typed,
                       w.HBox([pick_k, knob_box]), status, log, shown])
    box.controls = {"dataset": pick_data, "method": pick_method, "question": pick_question, "text": typed,
                    "k": pick_k, "knob": knob_box, "view": shown, "flipped": flip_vs}   # for scripts and tests
    state = {"quiet": False}

    def current_view():
        return explorer.view(pick_data.value, pick_method.value, pick_question.value, typed.value, pick_k.value,
                             getattr(knob_box.children[0], "value", None))

    def refresh(*_, capture: bool = True):
        if state["quiet"]:
            return
        status.value = f"<i>retrieving with {pick_method.value}… (a first build of a method takes a while)</i>"
        try:
            if capture:   # a build's progress bar goes to the log area, cleared once the view is there
                log.clear_output()
                with log:
                    view = current_view()
                log.clear_output()
            else:
                view = current_view()
            html = view.to_html()
        except Exception as e:   # a method that cannot run on this dataset: say so, keep the widget alive
            html = ExplorerView.failed(pick_data.value, pick_method.value, pick_k.value, typed.value,
                                       f"{type(e).__name__}: {e}").to_html()
        status.value = ""
        shown.value = box.view_html = html

    def set_questions():
        """The question list for the dataset, narrowed to the flipped ones when "flipped vs" names a method."""
        state["quiet"] = True
        try:
            options = _flipped_options(explorer, pick_data.value, pick_method.value, flip_vs.value, pick_k.value)
            status.value = "" if options else f"<i>no question flips between {pick_method.value} and {flip_vs.value}</i>"
            pick_question.options = options or _question_options(explorer, pick_data.value)
        finally:
            state["quiet"] = False

    def on_dataset(_):
        set_questions()
        state["quiet"] = True
        typed.value = ""
        state["quiet"] = False
        refresh()

    def on_method(change):
        knob_box.children = [_knob_slider(change["new"])]
        knob_box.children[0].observe(refresh, names="value")
        if flip_vs.value != ALL_QUESTIONS:
            set_questions()
        refresh()

    def on_flip(_):
        set_questions()
        refresh()

    def on_question(_):
        if typed.value:
            state["quiet"] = True
            typed.value = ""
            state["quiet"] = False
        refresh()

    pick_data.observe(on_dataset, names="value")
    pick_method.observe(on_method, names="value")
    pick_question.observe(on_question, names="value")
    flip_vs.observe(on_flip, names="value")
    for control in (typed, pick_k, knob_box.children[0]):
        control.observe(refresh, names="value")
    refresh(capture=False)   # the first view, while the cell runs: no Output capture (module docstring)
    return box


def explore(dataset: Dataset, *built, embedder=None, reasoner=None, method: str = "naive", k: int = 5) -> ExplorerBox:
    """``explorer_widget`` over the shipped datasets and ``dataset``, first showing ``method`` on its first
    question at ``k``; the retrievers ``built`` on ``dataset`` already (a notebook's) are reused, not built again."""
    explorer = Explorer(embedder=embedder, reasoner=reasoner).keep(dataset, *built)
    return explorer_widget(explorer, dataset.name, method, k)
