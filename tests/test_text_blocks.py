"""rag_lab.datasets.text_blocks.TextBlocks: the layout every section-keeping loader shares."""
from rag_lab.datasets.text_blocks import TextBlocks


def test_blocks_are_one_blank_line_apart_and_each_span_is_exact():
    blocks = TextBlocks()
    assert blocks.add("Title") == (0, 5)
    assert blocks.add("") == (7, 7)              # an empty block still takes its separator
    assert blocks.add("Body.") == (9, 14)
    assert blocks.text == "Title\n\n\n\nBody."
    assert blocks.length == len(blocks.text) == 14
    assert blocks.text[9:14] == "Body."


def test_no_block_is_no_text():
    assert TextBlocks().text == "" and TextBlocks().length == 0
