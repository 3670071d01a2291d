"""A team's own splitter, as the python strategy kind names one (``module:function``): its paragraphs."""


def by_paragraph(text: str) -> list[str]:
    return [paragraph for paragraph in text.split("\n\n") if paragraph.strip()]
