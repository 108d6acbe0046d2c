" The glassllm language server as ALE's linter for JSON: chat documents (see :help glassllm).
call ale#linter#Define('json', glassllm#Linter('json'))
