"""The one Markdown table formatter, and corpus text escaped so that it renders as written."""

from rag_assets.lib.formats.markdown import escape_markdown, excerpt, markdown_table, with_interval


def test_a_table_has_its_header_a_rule_and_one_line_per_row():
    table = markdown_table([("name", lambda r: r["n"]), ("twice", lambda r: 2 * r["v"])],
                           [{"n": "a", "v": 1}, {"n": "b", "v": 2}])
    assert table.splitlines() == ["| name | twice |", "|---|---|", "| a | 2 |", "| b | 4 |"]
    assert markdown_table([("only", str)], []) == "| only |\n|---|"


def test_corpus_text_cannot_break_a_table_or_become_markup():
    assert escape_markdown("a | b <script>x</script> [link](http://x)\nnext") == \
        r"a \| b &lt;script&gt;x&lt;/script&gt; \[link\]\(http://x\) next"
    cell = markdown_table([("text", lambda r: escape_markdown(r))], ["x | y"])
    assert cell.splitlines()[2] == r"| x \| y |"


def test_excerpts_and_intervals():
    assert excerpt("  many   words\nhere ") == "many words here"
    assert excerpt("x" * 200, limit=10) == "x" * 9 + "…"
    assert with_interval(0.52941, 0.4512, 0.6034) == "0.529 [0.45, 0.60]"
