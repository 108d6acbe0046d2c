" One glassllm session in a real Vim 9 with ALE, for test_vim.py.
"
" Run as `vim -N -u VIMRC -i NONE -n -es -S vim_session.vim' with GLASSLLM_FILE (the
" document), GLASSLLM_HOVER ("line column", byte column as col() counts), GLASSLLM_EDIT
" (text inserted at the start of line 1), GLASSLLM_SELECT ("line column count": a
" characterwise Visual selection of count characters) and GLASSLLM_OUT (where the JSON
" report goes). It records what ALE and the plugin show: the location list, the hover in
" ALE's preview window, the status line count before and after an edit, the pages of
" :1GlassllmExplain, :2GlassllmCompare and the Visual mapping, the file that
" :2GlassllmCompareInBrowser hands to the browser (GLASSLLM_VIEWER, which writes it to
" GLASSLLM_OPENED), the token map :GlassllmTokenMap hands over the same way, the count of
" that Visual selection, and :help glassllm.
"
" Ex mode runs no main loop: `sleep' lets jobs, channels and timers run, and the
" TextChanged that Vim fires after an edit when it waits for a key is fired here.

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

function! s:PageWindow(prefix) abort
  for l:window in range(1, winnr('$'))
    if bufname(winbufnr(l:window)) =~# '^' . a:prefix
      return l:window
    endif
  endfor
  return 0
endfunction

" The page a command opened: its buffer name and lines; the window is closed after.
function! s:TakePage(prefix) abort
  call s:Wait({-> s:PageWindow(a:prefix) > 0}, 'the page ' . a:prefix)
  let l:window = s:PageWindow(a:prefix)
  let l:buffer = winbufnr(l:window)
  let l:page = {'name': bufname(l:buffer), 'filetype': getbufvar(l:buffer, '&filetype'),
  \   'text': join(getbufline(l:buffer, 1, '$'), "\n"), 'windows': winnr('$'),
  \   'linted': getbufvar(l:buffer, 'ale_enabled', 1)}
  execute l:window . 'close'
  return l:page
endfunction

function! s:RecordSelectionCount() abort
  call s:Wait({-> glassllm#statusline() =~# '/'}, 'the selection count')
  let s:report.visual_statusline = mode() . ' ' . glassllm#statusline()
endfunction

try
  execute 'edit' fnameescape($GLASSLLM_FILE)
  let s:document = bufnr('')
  let s:report.filetype = &filetype
  let s:report.linters = g:ale_linters
  let s:report.language = get(ale#linter#Get(&filetype)->filter('v:val.name is# "glassllm"'), 0, {})->get('language', '')

  call s:Wait({-> len(getloclist(0)) >= 2}, 'the location list')
  let s:report.loclist = map(getloclist(0), {_, item -> {'lnum': item.lnum, 'col': item.col, 'type': item.type, 'text': item.text}})
  let s:report.ale_loclist = map(copy(ale#engine#GetLoclist(s:document)),
  \   {_, item -> {'lnum': item.lnum, 'col': item.col, 'end_col': item.end_col, 'code': get(item, 'code', ''), 'linter': item.linter_name}})

  " The hover, in ALE's preview window.
  let [s:line, s:column] = map(split($GLASSLLM_HOVER), 'str2nr(v:val)')
  call cursor(s:line, s:column)
  ALEHover
  call s:Wait({-> s:PageWindow('ALEPreviewWindow') > 0}, 'the hover')
  let s:preview = winbufnr(s:PageWindow('ALEPreviewWindow'))
  let s:report.hover = {'filetype': getbufvar(s:preview, '&filetype'), 'text': join(getbufline(s:preview, 1, '$'), "\n")}
  pclose

  " The count, then an edit and the count again.
  call s:Wait({-> !empty(glassllm#statusline())}, 'the token count')
  let s:report.statusline = glassllm#statusline()
  call setline(1, $GLASSLLM_EDIT . getline(1))
  doautocmd <nomodeline> TextChanged
  let s:before = s:report.statusline
  call s:Wait({-> glassllm#statusline() isnot# s:before}, 'the count after the edit')
  let s:report.edited_statusline = glassllm#statusline()
  let s:report.edited_text = join(getline(1, '$'), "\n") . "\n"

  " :1GlassllmExplain, :2GlassllmCompare, then the Visual mapping.
  1GlassllmExplain
  let s:report.explain = s:TakePage('glassllm://explain/')
  2GlassllmCompare
  let s:report.compare = s:TakePage('glassllm://compare/')
  " :2GlassllmCompareInBrowser: netrw hands the page to g:netrw_browsex_viewer, here a
  " script that only writes the path down (no browser runs here).
  let g:netrw_browsex_viewer = $GLASSLLM_VIEWER
  2GlassllmCompareInBrowser
  call s:Wait({-> filereadable($GLASSLLM_OPENED)}, 'the page handed to the browser')
  let s:report.browser = readfile($GLASSLLM_OPENED)
  " :GlassllmTokenMap: the token map of the project folder, handed over the same way.
  GlassllmTokenMap
  call s:Wait({-> len(readfile($GLASSLLM_OPENED)) > 1}, 'the token map handed to the browser')
  let s:report.token_map = readfile($GLASSLLM_OPENED)[-1]
  let [s:line, s:column, s:count] = map(split($GLASSLLM_SELECT), 'str2nr(v:val)')
  xmap <Leader>ge <Plug>(glassllm-explain)
  call cursor(s:line, s:column)
  execute 'normal v' . (s:count > 1 ? (s:count - 1) . 'l' : '') . "\\ge"
  let s:report.selection = s:TakePage('glassllm://explain/')
  " The same selection's count in the status line, read while Visual mode lasts.
  call cursor(s:line, s:column)
  execute 'normal! v' . (s:count > 1 ? (s:count - 1) . 'l' : '')
  \ . "\<Cmd>doautocmd <nomodeline> CursorMoved\<CR>\<Cmd>call s:RecordSelectionCount()\<CR>\<Esc>"
  let s:report.after_visual_statusline = glassllm#statusline()

  " :help, with the tags a plugin manager (or :helptags) makes.
  execute 'helptags' fnameescape($GLASSLLM_DOC)
  help glassllm
  let s:report.help = {'file': expand('%:t'), 'line': getline('.'), 'filetype': &filetype}
catch
  let s:report.error = v:exception . ' at ' . v:throwpoint
endtry
call writefile([json_encode(s:report)], $GLASSLLM_OUT)
qall!
