" A token budget in a real Vim 9 with ALE, for test_vim.py.
"
" Run as `vim -N -u VIMRC -i NONE -n -es -S vim_budget_session.vim' with GLASSLLM_FILE
" (a document in a repository whose .glassllm.toml gives it a budget), GLASSLLM_EDIT (a
" line appended, past the budget) and GLASSLLM_OUT (where the JSON report goes). It
" records ALE's budget diagnostics and the status line under the budget, after typing
" past it, and after deleting back under it. Ex mode runs no main loop: see vim_session.vim.

let s:report = {}

function! s:Wait(Predicate, what, ...) abort
  let l:deadline = reltimefloat(reltime()) + get(a:000, 0, 30)
  while !a:Predicate() && reltimefloat(reltime()) < l:deadline
    sleep 50m
  endwhile
  if !a:Predicate()
    throw 'timed out waiting for ' . a:what
  endif
endfunction

function! s:Budget() abort
  return map(filter(copy(ale#engine#GetLoclist(s:document)), {_, item -> get(item, 'code', '') is# 'token-budget'}),
  \   {_, item -> {'lnum': item.lnum, 'col': item.col, 'end_col': item.end_col, 'type': item.type, 'text': item.text}})
endfunction

try
  execute 'edit' fnameescape($GLASSLLM_FILE)
  let s:document = bufnr('')
  call s:Wait({-> glassllm#statusline() =~# ' / '}, 'the budget in the status line')
  let s:report.statusline = glassllm#statusline()
  " ALE has linted once (the unknown characters' diagnostics), with no budget among them.
  call s:Wait({-> !empty(ale#engine#GetLoclist(s:document))}, 'the first diagnostics')
  let s:report.under = s:Budget()
  call append('$', $GLASSLLM_EDIT)
  doautocmd <nomodeline> TextChanged
  call s:Wait({-> len(s:Budget()) == 1}, 'the budget diagnostic')
  let s:report.over = s:Budget()
  call s:Wait({-> glassllm#statusline() isnot# s:report.statusline}, 'the count after the edit')
  let s:report.over_statusline = glassllm#statusline()
  execute '$delete'
  doautocmd <nomodeline> TextChanged
  call s:Wait({-> empty(s:Budget())}, 'the budget diagnostic to go')
  call s:Wait({-> glassllm#statusline() ==# s:report.statusline}, 'the count back under the budget')
  let s:report.back = s:Budget()
  let s:report.back_statusline = glassllm#statusline()
catch
  let s:report.error = v:exception . ' at ' . v:throwpoint
endtry
call writefile([json_encode(s:report)], $GLASSLLM_OUT)
qall!
