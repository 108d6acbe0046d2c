"""What a person reads: the text the server shows, built from plain data in the user's
language (:mod:`glassllm_server.messages`). Never imports pygls or lsprotocol.

One module per thing shown: :mod:`.hover`, :mod:`.code_lens`, :mod:`.hints` (inlay hint
labels and tooltips), :mod:`.diagnostics` (unknown characters), :mod:`.explanation` (the
"Explain BPE merges" page), :mod:`.comparison` (hover lines and the "Compare tokenizers"
page), and :mod:`.markdown`, the code spans they all write.
"""
