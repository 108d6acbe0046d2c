"""The pipeline of glassllm's own tokenizer, one stage a module, in the order text goes::

    text → normalize (NFC) → chunks (▁ for spaces, the chunk rule) → bpe (merges)
         → pieces → specials and the vocabulary → IDs
    IDs → pieces → specials (⁇ for <unk>, the others dropped) → ▁ back to spaces → text

:mod:`glassllm.tokenizer` (outside this package: the user's API reference imports from it)
runs the stages end to end; :mod:`~glassllm.pipeline.tokens`
holds what every tokenizer gives (spans, merge steps, chunk explanations), and
:mod:`~glassllm.pipeline.any_tokenizer` what every tokenizer offers, real models' included.
"""
