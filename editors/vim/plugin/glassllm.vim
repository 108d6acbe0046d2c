" glassllm: the glassllm language server in Vim, through ALE.
" Registers the server with ALE for text and Markdown (hover, unknown-character
" diagnostics), and adds :GlassllmExplain, :GlassllmCompare (each also ...InBrowser) and
" glassllm#statusline().
" See :help glassllm.

if exists('g:loaded_glassllm') || &compatible || v:version < 900
  finish
endif
let g:loaded_glassllm = 1

" The server: a program and its arguments (a virtual environment's full path if it is
" not on $PATH).
let g:glassllm_server_command = get(g:, 'glassllm_server_command', ['glassllm-lsp'])
" The Python that runs the relay making the server count columns in bytes as ALE does
" (see :help glassllm-columns); empty: no relay.
let g:glassllm_python = get(g:, 'glassllm_python', exepath('python3'))
" The filetypes ALE runs glassllm for (each needs an ale_linters/{filetype}/glassllm.vim).
let g:glassllm_filetypes = get(g:, 'glassllm_filetypes', ['text', 'markdown'])
" The server's settings, sent as its `glassllm` section, e.g. {'tokenizer': 'en'}.
let g:glassllm_settings = get(g:, 'glassllm_settings', {})
" Quiet time after an edit or a selection change before the count is asked again.
let g:glassllm_statusline_delay = get(g:, 'glassllm_statusline_delay', 150)

command! -range -bar GlassllmExplain call glassllm#Run('explain', <line1>, <line2>)
command! -range -bar GlassllmCompare call glassllm#Run('compare', <line1>, <line2>)
command! -range -bar GlassllmExplainInBrowser call glassllm#Run('explain-in-browser', <line1>, <line2>)
command! -range -bar GlassllmCompareInBrowser call glassllm#Run('compare-in-browser', <line1>, <line2>)
command! -bar GlassllmTokenMap call glassllm#TokenMap()

" Normal mode: the token under the cursor; visual mode: the selection, to the character.
nnoremap <silent> <Plug>(glassllm-explain) <Cmd>call glassllm#RunAtCursor('explain')<CR>
nnoremap <silent> <Plug>(glassllm-compare) <Cmd>call glassllm#RunAtCursor('compare')<CR>
xnoremap <silent> <Plug>(glassllm-explain) <Cmd>call glassllm#RunOnSelection('explain')<CR>
xnoremap <silent> <Plug>(glassllm-compare) <Cmd>call glassllm#RunOnSelection('compare')<CR>
nnoremap <silent> <Plug>(glassllm-explain-in-browser) <Cmd>call glassllm#RunAtCursor('explain-in-browser')<CR>
nnoremap <silent> <Plug>(glassllm-compare-in-browser) <Cmd>call glassllm#RunAtCursor('compare-in-browser')<CR>
xnoremap <silent> <Plug>(glassllm-explain-in-browser) <Cmd>call glassllm#RunOnSelection('explain-in-browser')<CR>
xnoremap <silent> <Plug>(glassllm-compare-in-browser) <Cmd>call glassllm#RunOnSelection('compare-in-browser')<CR>

augroup glassllm
  autocmd!
  " Again once the vimrc and every plugin have run: a g:ale_linters set after this
  " file still gets glassllm added to it.
  autocmd VimEnter * call glassllm#AddToAleLinters()
  autocmd FileType * call glassllm#Attach(str2nr(expand('<abuf>')))
augroup END

call glassllm#AddToAleLinters()
