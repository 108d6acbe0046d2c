" The glassllm language server as ALE's linter for markdown (see :help glassllm).
call ale#linter#Define('markdown', glassllm#Linter('markdown'))
