scriptencoding utf-8
" glassllm's functions for Vim: ALE's linter definition, the server's commands and the
" token count, all through the connection ALE keeps to glassllm-lsp (see :help glassllm).

let s:commands = {
\   'explain': 'glassllm.explainMerges',
\   'compare': 'glassllm.compareTokenizers',
\}
" The kinds that open a page in a browser instead (glassllm.openInBrowser), and the page.
let s:browser_pages = {'explain-in-browser': 'explain', 'compare-in-browser': 'compare'}
" The language ID the server is told for each filetype.
let s:languages = {'text': 'plaintext', 'markdown': 'markdown', 'json': 'json'}
" Request ID -> the function that takes the server's answer.
let s:handlers = get(s:, 'handlers', {})
" Buffer number -> {'document': stats, 'selection': stats, 'timers': {kind: timer},
" 'connection': ALE's connection ID, once a request went through it}.
let s:buffers = get(s:, 'buffers', {})
let s:warned_missing = get(s:, 'warned_missing', 0)
" The relay that makes the server count columns in bytes, as ALE does.
let s:relay = expand('<sfile>:p:h:h') . '/bin/glassllm_utf8.py'

" ALE's linter for a filetype (ale_linters/{filetype}/glassllm.vim defines it).
function! glassllm#Linter(filetype) abort
  return {
  \   'name': 'glassllm',
  \   'lsp': 'stdio',
  \   'executable': {buffer -> get(s:Command(), 0, '')},
  \   'command': {buffer -> join(map(s:Command(), 'ale#Escape(v:val)'))},
  \   'project_root': function('glassllm#ProjectRoot'),
  \   'language': get(s:languages, a:filetype, a:filetype),
  \   'lsp_config': {buffer -> empty(g:glassllm_settings) ? {} : {'glassllm': g:glassllm_settings}},
  \}
endfunction

" The command ALE runs: the server, through the UTF-8 relay unless
" g:glassllm_python is empty. ALE 3.3 counts LSP columns in bytes but negotiates no
" position encoding; the relay offers UTF-8 for it, so the server counts bytes too.
function! s:Command() abort
  if empty(g:glassllm_python)
    return copy(g:glassllm_server_command)
  endif
  return [g:glassllm_python, s:relay] + g:glassllm_server_command
endfunction

" The folder holding the nearest .git above the file, or else the file's own folder:
" ALE starts no language server without a root.
function! glassllm#ProjectRoot(buffer) abort
  let l:folder = fnamemodify(bufname(a:buffer), ':p:h')
  let l:git = finddir('.git', fnameescape(l:folder) . ';')
  if empty(l:git)
    let l:git = findfile('.git', fnameescape(l:folder) . ';')
  endif
  return empty(l:git) ? l:folder : fnamemodify(l:git, ':p:h:h')
endfunction

" Adds glassllm to the linters ALE runs for each of g:glassllm_filetypes, keeping the
" user's own: a filetype the user lists gets glassllm appended; an unlisted one gets
" ['glassllm'] only where ALE would run no linter unasked (text, or every filetype under
" g:ale_linters_explicit), since a missing entry already means "all linters" elsewhere.
function! glassllm#AddToAleLinters() abort
  let g:ale_linters = get(g:, 'ale_linters', {})
  if type(g:ale_linters) isnot v:t_dict
    return
  endif
  for l:filetype in g:glassllm_filetypes
    let l:names = get(g:ale_linters, l:filetype, v:null)
    if type(l:names) is v:t_list
      if index(l:names, 'glassllm') < 0
        call add(l:names, 'glassllm')
      endif
    elseif l:names is v:null && (l:filetype is# 'text' || get(g:, 'ale_linters_explicit', 0))
      let g:ale_linters[l:filetype] = ['glassllm']
    endif
  endfor
endfunction

" On FileType: follow the token count of a glassllm buffer, and say once when the
" server cannot be found (ALE itself stays silent).
function! glassllm#Attach(buffer) abort
  if index(g:glassllm_filetypes, getbufvar(a:buffer, '&filetype')) < 0
    return
  endif
  if !executable(get(g:glassllm_server_command, 0, '')) && !s:warned_missing
    let s:warned_missing = 1
    echohl WarningMsg
    echomsg s:Text('missing', string(g:glassllm_server_command))
    echohl None
  endif
  if has_key(s:buffers, a:buffer)
    return
  endif
  let s:buffers[a:buffer] = {'document': {}, 'selection': {}, 'timers': {'document': -1, 'selection': -1}}
  execute printf('augroup glassllm_buffer_%d', a:buffer)
  autocmd!
  execute printf('autocmd TextChanged,TextChangedI <buffer=%d> call s:Schedule(%d)', a:buffer, a:buffer)
  execute printf('autocmd CursorMoved,ModeChanged <buffer=%d> call s:SelectionMoved(%d)', a:buffer, a:buffer)
  execute printf('autocmd BufWipeout <buffer=%d> call s:Forget(%d)', a:buffer, a:buffer)
  augroup END
  augroup glassllm_ale
    autocmd!
    " ALE fires it in the buffer whose server just started.
    autocmd User ALELSPStarted call s:LspStarted(bufnr(''))
  augroup END
  call s:Schedule(a:buffer)
endfunction

" ALE fires ALELSPStarted whenever a request goes through ale#lsp_linter#StartLSP, this
" plugin's own included, so the count is asked again when a server starts, not after each
" of this plugin's requests (which would ask again for ever).
let s:requesting = get(s:, 'requesting', 0)

function! s:LspStarted(buffer) abort
  if !s:requesting
    call s:Schedule(a:buffer)
  endif
endfunction

function! s:Forget(buffer) abort
  let l:state = remove(s:buffers, a:buffer)
  call timer_stop(l:state.timers.document)
  call timer_stop(l:state.timers.selection)
  execute printf('autocmd! glassllm_buffer_%d', a:buffer)
  execute printf('augroup! glassllm_buffer_%d', a:buffer)
endfunction

" Messages in the user's language, chosen as the server chooses its own: the locale
" setting, or else the environment ($LC_ALL, $LC_MESSAGES, $LANG), or else Vim's.
let s:texts = {
\   'missing': {
\       'en': 'glassllm: the server command %s is not executable: set g:glassllm_server_command (:help glassllm-options)',
\       'pt': 'glassllm: o comando do servidor %s não é executável: ajuste g:glassllm_server_command (:help glassllm-options)',
\   },
\   'no_linter': {
\       'en': 'glassllm: ALE has no glassllm linter for filetype "%s" (:help glassllm-install)',
\       'pt': 'glassllm: o ALE não tem o linter glassllm para o tipo de arquivo "%s" (:help glassllm-install)',
\   },
\   'not_started': {
\       'en': 'glassllm: ALE could not start the server %s',
\       'pt': 'glassllm: o ALE não conseguiu iniciar o servidor %s',
\   },
\   'failed': {'en': 'glassllm: %s', 'pt': 'glassllm: %s'},
\   'page': {'en': 'glassllm: the page is in %s', 'pt': 'glassllm: a página está em %s'},
\   'template': {'en': ' (%s from the template)', 'pt': ' (%s do modelo de chat)'},
\}

function! s:Language() abort
  let l:chosen = get(g:glassllm_settings, 'locale', '')
  for l:candidate in [$LC_ALL, $LC_MESSAGES, $LANG, v:lang]
    if type(l:chosen) is v:t_string && !empty(l:chosen)
      break
    endif
    let l:chosen = l:candidate
  endfor
  return l:chosen =~? '^pt' ? 'pt' : 'en'
endfunction

function! s:Text(key, ...) abort
  return call('printf', [s:texts[a:key][s:Language()]] + a:000)
endfunction

function! s:Error(message) abort
  echohl ErrorMsg
  echomsg a:message
  echohl None
endfunction

" The length of a text in the server's position units: bytes through the relay
" (UTF-8), else UTF-16 code units, where a character above U+FFFF takes two.
function! s:Units(text) abort
  if !empty(g:glassllm_python)
    return len(a:text)
  endif
  let l:codes = str2list(a:text, 1)
  return len(l:codes) + len(filter(l:codes, 'v:val > 0xFFFF'))
endfunction

" The LSP position of byte column {column} (1-based, as col() gives it) of line {line}.
function! s:Position(buffer, line, column) abort
  let l:text = get(getbufline(a:buffer, a:line), 0, '')
  return {'line': a:line - 1, 'character': s:Units(strpart(l:text, 0, a:column - 1))}
endfunction

" The column just after the character at byte column {column} of line {line}, composing
" characters included.
function! s:After(buffer, line, column) abort
  let l:text = get(getbufline(a:buffer, a:line), 0, '')
  return a:column + max([len(matchstr(strpart(l:text, a:column - 1), '^.')), 1])
endfunction

function! s:LinesRange(buffer, first, last) abort
  let l:last = get(getbufline(a:buffer, a:last), 0, '')
  return {'start': s:Position(a:buffer, a:first, 1), 'end': s:Position(a:buffer, a:last, len(l:last) + 1)}
endfunction

" The visual selection ({mode} v or V, between the positions {a} and {b} from getpos())
" as an LSP range; the end is inclusive in Vim, exclusive in LSP.
function! s:SelectionRange(buffer, mode, a, b) abort
  let [l:first, l:last] = (a:a[1] < a:b[1] || (a:a[1] == a:b[1] && a:a[2] <= a:b[2])) ? [a:a, a:b] : [a:b, a:a]
  if a:mode is# 'V'
    return s:LinesRange(a:buffer, l:first[1], l:last[1])
  endif
  return {
  \   'start': s:Position(a:buffer, l:first[1], l:first[2]),
  \   'end': s:Position(a:buffer, l:last[1], s:After(a:buffer, l:last[1], l:last[2])),
  \}
endfunction

function! s:Uri(buffer) abort
  " The URI exactly as ALE sent it in didOpen.
  return ale#util#ToURI(expand('#' . a:buffer . ':p'))
endfunction

function! s:AleLinter(buffer) abort
  let l:filetype = getbufvar(a:buffer, '&filetype')
  let l:found = filter(ale#linter#Get(l:filetype), 'v:val.name is# ''glassllm''')
  return empty(l:found) ? {} : l:found[0]
endfunction

" Sends {method} with {params} on ALE's connection for {buffer} (starting it if needed,
" after the buffer's latest text) and calls {Handler} with the response. Returns 0 when
" ALE has no glassllm linter for the buffer or cannot start the server.
function! s:Request(buffer, method, params, Handler) abort
  let l:linter = s:AleLinter(a:buffer)
  if empty(l:linter)
    return 0
  endif
  let s:requesting = 1
  try
    return ale#lsp_linter#StartLSP(a:buffer, l:linter, function('s:OnReady', [a:method, a:params, a:Handler]))
  finally
    let s:requesting = 0
  endtry
endfunction

function! s:OnReady(method, params, Handler, linter, details) abort
  let l:connection = a:details.connection_id
  let l:state = get(s:buffers, a:details.buffer, {})
  if !empty(l:state)
    let l:state.connection = l:connection
  endif
  " The server must answer about the text as it is now, not as ALE last linted it.
  call ale#lsp#NotifyForChanges(l:connection, a:details.buffer)
  call ale#lsp#RegisterCallback(l:connection, function('s:OnMessage'))
  let l:id = ale#lsp#Send(l:connection, [0, a:method, a:params])
  if l:id > 0
    let s:handlers[l:id] = a:Handler
  endif
endfunction

" ALE hands every message from the server to the callbacks registered on its connection:
" the answers to this file's requests, and the server's glassllm/tokenizersChanged.
function! s:OnMessage(connection, message) abort
  if get(a:message, 'method', '') is# 'glassllm/tokenizersChanged'
    call s:TokenizersChanged(a:connection)
  " Responses only: requests from the server carry a method (and IDs of their own).
  elseif has_key(a:message, 'id') && !has_key(a:message, 'method') && has_key(s:handlers, a:message.id)
    call call(remove(s:handlers, a:message.id), [a:message])
  endif
endfunction

" :[range]GlassllmExplain and :[range]GlassllmCompare: the whole lines of the range.
function! glassllm#Run(kind, first, last) abort
  call s:RunCommand(a:kind, bufnr(''), s:LinesRange(bufnr(''), a:first, a:last))
endfunction

" The chunk of the token under the cursor.
function! glassllm#RunAtCursor(kind) abort
  let l:position = s:Position(bufnr(''), line('.'), col('.'))
  call s:RunCommand(a:kind, bufnr(''), {'start': l:position, 'end': l:position})
endfunction

" The visual selection, to the character (a block selection counts as its lines).
function! glassllm#RunOnSelection(kind) abort
  let l:mode = mode() is# 'v' ? 'v' : 'V'
  let l:range = s:SelectionRange(bufnr(''), l:mode, getpos('v'), getpos('.'))
  execute "normal! \<Esc>"
  call s:RunCommand(a:kind, bufnr(''), l:range)
endfunction

function! s:RunCommand(kind, buffer, range) abort
  if has_key(s:browser_pages, a:kind)
    let l:arguments = [s:Uri(a:buffer), a:range, s:browser_pages[a:kind]]
    let l:params = {'command': 'glassllm.openInBrowser', 'arguments': l:arguments}
    let l:Show = function('s:OpenInBrowser')
  else
    let l:params = {'command': s:commands[a:kind], 'arguments': [s:Uri(a:buffer), a:range]}
    let l:Show = function('s:ShowPage', [a:kind, a:buffer])
  endif
  if empty(s:AleLinter(a:buffer))
    call s:Error(s:Text('no_linter', getbufvar(a:buffer, '&filetype')))
  elseif !s:Request(a:buffer, 'workspace/executeCommand', l:params, l:Show)
    call s:Error(s:Text('not_started', string(g:glassllm_server_command)))
  endif
endfunction

" :GlassllmTokenMap: the token map of the workspace (glassllm.tokenMap), through the
" current buffer's connection, opened in the browser as the pages of a selection are.
function! glassllm#TokenMap() abort
  let l:buffer = bufnr('')
  let l:params = {'command': 'glassllm.tokenMap', 'arguments': []}
  if empty(s:AleLinter(l:buffer))
    call s:Error(s:Text('no_linter', getbufvar(l:buffer, '&filetype')))
  elseif !s:Request(l:buffer, 'workspace/executeCommand', l:params, function('s:OpenInBrowser'))
    call s:Error(s:Text('not_started', string(g:glassllm_server_command)))
  endif
endfunction

" Shows the page the server wrote for a command in a split: a Markdown buffer of its own
" per document and kind, replaced by the next answer.
function! s:ShowPage(kind, buffer, response) abort
  if has_key(a:response, 'error')
    call s:Error(s:Text('failed', get(a:response.error, 'message', string(a:response.error))))
    return
  endif
  let l:result = get(a:response, 'result', v:null)
  if type(l:result) isnot v:t_dict || type(get(l:result, 'markdown')) isnot v:t_string
    return
  endif
  let l:name = printf('glassllm://%s/%s', a:kind, fnamemodify(bufname(a:buffer), ':t'))
  let l:window = bufwinid(l:name)
  if l:window > 0
    call win_gotoid(l:window)
  else
    " No autocommands: filetype detection would take the page's name (conto.txt) for
    " text's, which ALE lints at once; the page's own filetype is set below.
    execute 'silent keepalt noautocmd split' fnameescape(l:name)
  endif
  " The page is the server's answer, not a document: ALE would start a server for it,
  " whose answer could come after the page is wiped.
  let b:ale_enabled = 0
  setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted modifiable
  silent %delete _
  call setline(1, split(l:result.markdown, "\n", 1))
  setlocal nomodifiable nomodified filetype=markdown
  normal! gg
endfunction

" Opens the HTML page the server wrote, as netrw's gx does (xdg-open, open or start):
" ALE does not open documents for servers, so the server only wrote it.
function! s:OpenInBrowser(response) abort
  if has_key(a:response, 'error')
    call s:Error(s:Text('failed', get(a:response.error, 'message', string(a:response.error))))
    return
  endif
  let l:result = get(a:response, 'result', v:null)
  if type(l:result) isnot v:t_dict || type(get(l:result, 'path')) isnot v:t_string
    return
  endif
  echomsg s:Text('page', l:result.path)
  if get(l:result, 'opened') isnot v:true
    call netrw#BrowseX(l:result.path, 0)
  endif
endfunction

" The token count --------------------------------------------------------------------

function! s:Schedule(buffer) abort
  let l:state = get(s:buffers, a:buffer, {})
  if empty(l:state)
    return
  endif
  call timer_stop(l:state.timers.document)
  let l:state.timers.document = timer_start(g:glassllm_statusline_delay, {-> s:AskStats(a:buffer, 'document')})
endfunction

" The server's glassllm/tokenizersChanged: glassllm/stats would answer otherwise without
" an edit (a tokenizer file that loaded after the settings named it, a compared one that
" became ready). Every buffer on that connection asks for its count again.
function! s:TokenizersChanged(connection) abort
  for [l:buffer, l:state] in items(s:buffers)
    if get(l:state, 'connection', '') is# a:connection
      call s:Schedule(str2nr(l:buffer))
      if str2nr(l:buffer) == bufnr('')
        call s:SelectionMoved(str2nr(l:buffer))
      endif
    endif
  endfor
endfunction

function! s:InVisualMode() abort
  return mode() =~# '^[vV]$'
endfunction

function! s:SelectionMoved(buffer) abort
  let l:state = get(s:buffers, a:buffer, {})
  if empty(l:state)
    return
  endif
  if s:InVisualMode()
    let l:range = s:SelectionRange(a:buffer, mode(), getpos('v'), getpos('.'))
    call timer_stop(l:state.timers.selection)
    let l:state.timers.selection = timer_start(g:glassllm_statusline_delay,
    \   {-> s:AskStats(a:buffer, 'selection', l:range)})
  elseif !empty(l:state.selection)
    let l:state.selection = {}
    redrawstatus
  endif
endfunction

" Asks glassllm/stats for the document or a range; the answer to the latest question of
" each kind is kept, and the status line redrawn when it arrives.
function! s:AskStats(buffer, kind, ...) abort
  let l:state = get(s:buffers, a:buffer, {})
  if empty(l:state) || !bufexists(a:buffer) || !bufloaded(a:buffer)
    return
  endif
  let l:params = {'textDocument': {'uri': s:Uri(a:buffer)}}
  if a:0
    let l:params.range = a:1
  endif
  let l:state.asked = get(l:state, 'asked', 0) + 1
  let l:asked = l:state.asked
  let l:state['question_' . a:kind] = l:asked
  call s:Request(a:buffer, 'glassllm/stats', l:params, function('s:OnStats', [a:buffer, a:kind, l:asked]))
endfunction

function! s:OnStats(buffer, kind, asked, response) abort
  let l:state = get(s:buffers, a:buffer, {})
  if empty(l:state) || get(l:state, 'question_' . a:kind) != a:asked
    return
  endif
  let l:result = get(a:response, 'result', v:null)
  if type(l:result) is v:t_dict
    let l:state[a:kind] = l:result
    redrawstatus!
  endif
endfunction

function! s:Grouped(number) abort
  let l:separator = s:Language() is# 'pt' ? '.' : ','
  return substitute(string(a:number), '\d\zs\ze\(\d\d\d\)\+$', l:separator, 'g')
endfunction

" The status line's text: "1,234 tokens", "3,900 / 4,096 tokens" when a token budget
" applies, or "12/1,234 tokens" with a visual selection; a chat document's with the
" template's share, "3,900 / 4,096 tokens (87 from the template)";
" empty in buffers glassllm does not serve. It never waits for the server: it shows the
" latest answer, and a new answer redraws the status line.
function! glassllm#statusline(...) abort
  let l:buffer = a:0 ? a:1 : bufnr('')
  let l:state = get(s:buffers, l:buffer, {})
  if empty(l:state) || empty(l:state.document)
    return ''
  endif
  let l:total = l:state.document.tokens
  let l:text = s:Grouped(l:total) . (l:total == 1 ? ' token' : ' tokens')
  let l:budget = get(l:state.document, 'budget', v:null)
  let l:selected = !empty(l:state.selection) && s:InVisualMode() && l:buffer == bufnr('')
  if l:selected
    let l:text = s:Grouped(l:state.selection.tokens) . '/' . l:text
  elseif type(l:budget) is v:t_dict
    " A token budget applies (glassllm.maxTokens, glassllm.budgets or the repository's):
    " its use, counted with its tokenizer (a dataset's largest line).
    let l:text = s:Grouped(l:budget.tokens) . ' / ' . s:Grouped(l:budget.maxTokens) . ' tokens'
  endif
  if type(get(l:state.document, 'chat')) is v:t_dict && !l:selected
    " A chat document counts its prompts: the template's share beside the count (the
    " budget's unit's when a budget applies).
    let l:share = type(l:budget) is v:t_dict ? l:budget.templateTokens : l:state.document.chat.templateCount
    let l:text .= s:Text('template', s:Grouped(l:share))
  endif
  return l:text
endfunction
