"""What people read: characters made visible (:mod:`~glassllm.shown.visible`), positions as
``line:column`` (:mod:`~glassllm.shown.places`), errors worded in English or Portuguese
(:mod:`~glassllm.shown.problems`) and the self-contained HTML pages
(:mod:`~glassllm.shown.html_page`; the map of a repository's tokens,
:mod:`~glassllm.shown.tokens_page`).
"""
