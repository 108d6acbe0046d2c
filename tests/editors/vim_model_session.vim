" GlassLLM with a real model's tokenizer in a real Vim 9 with ALE, for test_vim.py.
"
" Run as `vim -N -u VIMRC -i NONE -n -es -S vim_model_session.vim' with GLASSLLM_FILE
" (the document), GLASSLLM_HOVERS ("line column" pairs, byte columns as col() counts,
" separated by commas), GLASSLLM_COUNT (the count the status line must come to show by
" itself) and GLASSLLM_OUT (where the JSON report goes); the vimrc names the tokenizer in
" g:glassllm_settings. It records the status line's first count and the one it comes to,
" and the hovers in ALE's preview window. Ex mode runs no main loop: see vim_session.vim.

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

function! s:Preview() abort
  for l:window in range(1, winnr('$'))
    if bufname(winbufnr(l:window)) =~# '^ALEPreviewWindow'
      return winbufnr(l:window)
    endif
  endfor
  return 0
endfunction

try
  execute 'edit' fnameescape($GLASSLLM_FILE)
  call s:Wait({-> !empty(glassllm#statusline())}, 'the token count')
  let s:report.first_statusline = glassllm#statusline()
  " A load that outlasts the moment the first count waits for it ends with the server's
  " glassllm/tokenizersChanged: the count is asked again, without an edit.
  let s:changedtick = b:changedtick
  call s:Wait({-> glassllm#statusline() ==# $GLASSLLM_COUNT}, 'the count ' . $GLASSLLM_COUNT)
  let s:report.statusline = glassllm#statusline()
  let s:report.edited = b:changedtick != s:changedtick ? v:true : v:false
  let s:report.hovers = []
  for s:place in split($GLASSLLM_HOVERS, ',')
    let [s:line, s:column] = map(split(s:place), 'str2nr(v:val)')
    call cursor(s:line, s:column)
    ALEHover
    call s:Wait({-> s:Preview() > 0}, 'the hover')
    call add(s:report.hovers, join(getbufline(s:Preview(), 1, '$'), "\n"))
    pclose
  endfor
catch
  let s:report.error = v:exception . ' at ' . v:throwpoint
endtry
call writefile([json_encode(s:report)], $GLASSLLM_OUT)
qall!
