from __future__ import annotations

from pt2bot.rules.base import Rule


class SyntaxErrorRule(Rule):
    """## What it does
    Reports a file that pt2bot could not read or parse: a syntax error, or bytes that are not
    valid in the file's encoding. The other files are still checked.

    ## Why is this bad?
    A file that does not parse cannot be checked, and it will not import either: torch.compile
    never gets to see it. The finding points at the line and column Python reports.

    ## Example
    ```python
    def forward(self, x)
        return x
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return x
    ```
    """

    code = "PTC000"
    name = "unparsable-file"
    summary = "file could not be decoded or parsed"
    claim = "none"
    doc_url = "https://docs.python.org/3/reference/lexical_analysis.html"
