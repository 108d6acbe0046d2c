"""Tokenizer files: glassllm's own JSON (:mod:`~glassllm.formats.files`), the Hugging Face
export (:mod:`~glassllm.formats.hf_export`), and real models' tokenizers read by
glassllm's own pure-Python code (:mod:`~glassllm.formats.load` recognizes which from a
file's content).

Every real model's tokenizer is a :class:`~glassllm.formats.model_tokenizer.ModelTokenizer`
whose format fills in each stage: Hugging Face BPE (:mod:`~glassllm.formats.hf_bpe`, byte-level
symbols from :mod:`~glassllm.formats.byte_level`, Metaspace from
:mod:`~glassllm.formats.metaspace`), SentencePiece ``.model`` (:mod:`~glassllm.formats.sentencepiece_bpe`,
read with :mod:`~glassllm.formats.protobuf`) and Tekken (:mod:`~glassllm.formats.tekken`);
their pre-tokenizer patterns are :mod:`~glassllm.formats.patterns`, their merges
:mod:`~glassllm.formats.merging`, and ``hf:ORG/NAME`` is found by :mod:`~glassllm.formats.hub`.
"""
