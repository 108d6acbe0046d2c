" The glassllm language server as ALE's linter for text (see :help glassllm).
call ale#linter#Define('text', glassllm#Linter('text'))
