--- GlassLLM for Neovim 0.11+: the extras over the language server that lsp/glassllm.lua
--- configures. setup() enables the server (vim.lsp.enable), turns inlay hints on, maps keys
--- to the "Explain BPE merges" and "Compare tokenizers" code actions, opens their pages
--- beside the text, and keeps a token count (document, and the selection in visual mode)
--- for the statusline, with the compared tokenizers' counts if asked. See :help glassllm.
local M = {}

local EXPLAIN_COMMAND = 'glassllm.explainMerges'
local COMPARE_COMMAND = 'glassllm.compareTokenizers'
local BROWSER_COMMAND = 'glassllm.openInBrowser'
local TOKEN_MAP_COMMAND = 'glassllm.tokenMap'

M.defaults = {
  -- Given ones go to vim.lsp.config('glassllm', ...) over lsp/glassllm.lua: the server
  -- command (a list), the filetypes, and the settings sent as the `glassllm` section,
  -- e.g. { glassllm = { tokenizer = 'en' } }.
  cmd = nil,
  filetypes = nil,
  settings = nil,
  -- setup() calls vim.lsp.enable('glassllm'); false leaves that to the user.
  enable = true,
  inlay_hints = true,
  -- Normal mode explains the token under the cursor, visual mode the selection; false: no mapping.
  explain_key = '<leader>ge',
  -- The same for "Compare tokenizers" (the tokenizers of the glassllm.compareWith setting).
  compare_key = '<leader>gc',
  -- Also show each compared tokenizer's count in the statusline ("1,234 tokens · en 1,500").
  statusline_compare = false,
  -- Quiet time after typing or moving the selection before the count is asked again.
  debounce_ms = 100,
}

--- The options setup() was given, over the defaults (statusline() reads them).
M.config = vim.deepcopy(M.defaults)

--- bufnr -> { document = stats?, selection = stats?, timers = { [kind] = uv_timer }, pending = { [kind] = request_id } }
local buffers = {}

local function glass_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'glassllm' })[1]
end

--- Character- and line-wise visual modes; a block selection is not one LSP range, so it
--- shows the document's count only.
local function in_visual_mode()
  local mode = vim.fn.mode()
  return mode == 'v' or mode == 'V'
end

--- Portuguese when the server's locale setting says so, or else when Neovim's messages are.
local function language(client)
  local settings = client and client.settings and client.settings.glassllm or {}
  local chosen = settings.locale
  if type(chosen) ~= 'string' or chosen == '' then
    chosen = vim.v.lang
  end
  return chosen:lower():sub(1, 2) == 'pt' and 'pt' or 'en'
end

local function group_digits(n, separator)
  local digits = tostring(n):reverse():gsub('(%d%d%d)', '%1' .. separator):reverse()
  return (digits:gsub('^' .. vim.pesc(separator), ''))
end

--- A compared tokenizer as the statusline names it: `en` and `hf:` ids whole, a file by
--- its name, with its folder when every model's file has that name (llama3/tokenizer.json).
local function tokenizer_name(tokenizer)
  if tokenizer:sub(1, 3) == 'hf:' then
    return tokenizer
  end
  local name = vim.fs.basename(tokenizer)
  local folder = vim.fs.basename(vim.fs.dirname(tokenizer))
  local generic = name:match('^tokenizer%.') or name == 'tekken.json'
  return (generic and folder ~= '' and folder ~= '.') and (folder .. '/' .. name) or name
end

--- The text for a statusline: "1,234 tokens", "3,900 / 4,096 tokens" when a token budget
--- applies, or "12/1,234 tokens" in visual mode; a chat document's with the template's
--- share, "3,900 / 4,096 tokens (87 from the template)", followed
--- with `statusline_compare` by each compared tokenizer's ("· en 15/1,500").
--- Empty in buffers glassllm does not serve. Never waits for the server: it shows the
--- last answer, and a fresh one redraws the statusline when it arrives. Statusline plugins
--- may pass arguments of their own (lualine passes a table or a boolean): only a buffer
--- number is taken.
function M.statusline(bufnr)
  if type(bufnr) ~= 'number' or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local state = buffers[bufnr]
  if not state or not state.document then
    return ''
  end
  local portuguese = language(glass_client(bufnr)) == 'pt'
  local separator = portuguese and '.' or ','
  local total = state.document.tokens
  local text = group_digits(total, separator) .. (total == 1 and ' token' or ' tokens')
  local selection = state.selection and in_visual_mode() and state.selection or nil
  local budget = state.document.budget
  if selection then
    text = group_digits(selection.tokens, separator) .. '/' .. text
  elseif type(budget) == 'table' then
    -- A token budget applies (glassllm.maxTokens, glassllm.budgets or the repository's):
    -- its use, counted with its tokenizer (a dataset's largest line): "3,900 / 4,096 tokens".
    text = group_digits(budget.tokens, separator) .. ' / ' .. group_digits(budget.maxTokens, separator) .. ' tokens'
  end
  -- A chat document counts its prompts: the template's share beside the count (the
  -- budget's unit's when a budget applies).
  local chat = state.document.chat
  if not selection and type(chat) == 'table' then
    local share = type(budget) == 'table' and budget.templateTokens or chat.templateCount
    text = text .. ' (' .. group_digits(share, separator) .. (portuguese and ' do modelo de chat)' or ' from the template)')
  end
  if M.config.statusline_compare then
    for index, compared in ipairs(state.document.compare or {}) do
      local count = group_digits(compared.tokens, separator)
      local part = selection and selection.compare and selection.compare[index]
      if part then
        count = group_digits(part.tokens, separator) .. '/' .. count
      end
      text = text .. ' · ' .. tokenizer_name(compared.tokenizer) .. ' ' .. count
    end
  end
  return text
end

--- The LSP range of the visual selection, exact in the client's position encoding.
local function visual_range(bufnr, encoding)
  local mode = vim.fn.mode()
  local a, b = vim.fn.getpos('v'), vim.fn.getpos('.')
  if a[2] > b[2] or (a[2] == b[2] and a[3] > b[3]) then
    a, b = b, a
  end
  local first, last = a[2] - 1, b[2] - 1
  local start_col, end_col
  if mode == 'V' then
    start_col, end_col = 0, nil
  else
    local last_line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, true)[1]
    start_col = a[3] - 1
    if b[3] > #last_line then
      end_col = nil
    else
      -- Inclusive selection: the range ends after the last byte of the last selected character.
      end_col = b[3] + vim.str_utf_end(last_line, b[3])
    end
  end
  local function position(row, col)
    if col == nil then
      local line_count = vim.api.nvim_buf_line_count(bufnr)
      if row + 1 < line_count then
        return { line = row + 1, character = 0 }
      end
      local text = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1]
      return { line = row, character = vim.str_utfindex(text, encoding) }
    end
    local text = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1]
    return { line = row, character = vim.str_utfindex(text, encoding, math.min(col, #text)) }
  end
  return { start = position(first, start_col), ['end'] = position(last, end_col) }
end

--- Ask `glassllm/stats` for the document ('document') or the visual selection ('selection');
--- a newer request for the same kind cancels the older one.
local function request_stats(bufnr, kind)
  local client = glass_client(bufnr)
  local state = buffers[bufnr]
  if not client or not state then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  if kind == 'selection' then
    if not in_visual_mode() or vim.api.nvim_get_current_buf() ~= bufnr then
      state.selection = nil
      return
    end
    params.range = visual_range(bufnr, client.offset_encoding)
  end
  local previous = state.pending[kind]
  if previous then
    client:cancel_request(previous)
  end
  local ok, request_id
  ok, request_id = client:request('glassllm/stats', params, function(err, result)
    if state.pending[kind] ~= request_id then
      return
    end
    state.pending[kind] = nil
    if err or not result then
      return
    end
    state[kind] = result
    vim.cmd.redrawstatus()
  end, bufnr)
  state.pending[kind] = ok and request_id or nil
end

local function schedule_stats(bufnr, kind, delay)
  local state = buffers[bufnr]
  if not state then
    return
  end
  state.timers[kind] = state.timers[kind] or vim.uv.new_timer()
  state.timers[kind]:stop()
  state.timers[kind]:start(delay, 0, vim.schedule_wrap(function()
    if buffers[bufnr] == state then
      request_stats(bufnr, kind)
    end
  end))
end

local function forget(bufnr)
  local state = buffers[bufnr]
  if not state then
    return
  end
  for _, timer in pairs(state.timers) do
    timer:stop()
    timer:close()
  end
  buffers[bufnr] = nil
end

local function watch(bufnr, config)
  if buffers[bufnr] then
    return
  end
  local state = { pending = {}, timers = {} }
  buffers[bufnr] = state
  local group = vim.api.nvim_create_augroup('glassllm_buffer_' .. bufnr, { clear = true })
  local delay = config.debounce_ms
  -- on_lines sees every change (typing, undo, other plugins, the API) as it happens.
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if buffers[bufnr] ~= state then
        return true
      end
      schedule_stats(bufnr, 'document', delay)
    end,
  })
  vim.api.nvim_create_autocmd({ 'CursorMoved', 'ModeChanged' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      if in_visual_mode() then
        schedule_stats(bufnr, 'selection', delay)
      elseif state.selection then
        state.selection = nil
        vim.cmd.redrawstatus()
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    buffer = bufnr,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == 'glassllm' then
        forget(bufnr)
        vim.api.nvim_del_augroup_by_id(group)
      end
    end,
  })
  schedule_stats(bufnr, 'document', 0)
end

--- The server's `glassllm/tokenizersChanged`: `glassllm/stats` would answer otherwise
--- without an edit (a tokenizer file that loaded after the settings named it, a compared
--- one that became ready). Every buffer that client serves asks for its counts again.
--- lsp/glassllm.lua installs it as the client's handler.
function M.tokenizers_changed(_, _, ctx)
  for bufnr in pairs(buffers) do
    local client = glass_client(bufnr)
    if client and client.id == ctx.client_id then
      schedule_stats(bufnr, 'document', 0)
      if in_visual_mode() and bufnr == vim.api.nvim_get_current_buf() then
        schedule_stats(bufnr, 'selection', 0)
      end
    end
  end
end

--- The command a code action runs and its arguments (an action, or a bare Command).
local function command_of(action)
  local command = action.command
  if type(command) == 'table' then
    return command.command, command.arguments or {}
  end
  return command, action.arguments or {}
end

--- A function that runs the server's code action for `command` (with `page` as its third
--- argument, if given) on the selection (visual mode), on `range` ({ start = { row, col },
--- ['end'] = { row, col } }, rows from 1) if given, or on the token under the cursor.
local function code_action(command, page)
  return function(range)
    vim.lsp.buf.code_action({
      apply = true,
      range = range,
      filter = function(action)
        local name, arguments = command_of(action)
        return name == command and (page == nil or arguments[3] == page)
      end,
    })
  end
end

--- Run "Explain BPE merges".
M.explain = code_action(EXPLAIN_COMMAND)
--- Run "Compare tokenizers".
M.compare = code_action(COMPARE_COMMAND)
--- Open the explanation as an HTML page in the browser (window/showDocument, external:
--- Neovim's handler opens it with vim.ui.open).
M.explain_in_browser = code_action(BROWSER_COMMAND, 'explain')
--- Open the comparison the same way.
M.compare_in_browser = code_action(BROWSER_COMMAND, 'compare')

--- Map the workspace's tokens (glassllm.tokenMap): the server counts every text file of
--- the workspace folders, with progress ($/progress, see vim.lsp.status()), and opens the
--- page in the browser (window/showDocument, external); an error is shown as a message.
function M.token_map()
  local client = glass_client(vim.api.nvim_get_current_buf())
  if not client then
    vim.notify('GlassLLM: no glassllm server in this buffer', vim.log.levels.ERROR)
    return
  end
  client:exec_cmd({ title = 'Token map', command = TOKEN_MAP_COMMAND, arguments = {} }, nil, function(err)
    if err then
      vim.notify('GlassLLM: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end)
end

--- The server writes each explanation to a Markdown file and asks to show it: open it in a
--- split beside the text instead of replacing the text in its window. lsp/glassllm.lua
--- installs it as the client's window/showDocument handler.
function M.show_document(err, params, ctx)
  if params.external or not params.uri:match('%.md$') then
    return vim.lsp.handlers['window/showDocument'](err, params, ctx)
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  vim.b[bufnr].glassllm_explanation = true
  if vim.api.nvim_buf_is_loaded(bufnr) then
    -- The same file may hold an earlier explanation: read it again.
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('silent edit!')
    end)
  else
    vim.fn.bufload(bufnr)
  end
  vim.bo[bufnr].buflisted = true
  -- One window for explanations: a new page replaces the one shown, instead of a new split.
  local win
  for _, candidate in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.b[vim.api.nvim_win_get_buf(candidate)].glassllm_explanation then
      win = candidate
      break
    end
  end
  local previous = vim.api.nvim_get_current_win()
  if not win then
    vim.cmd('botright vsplit')
    win = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_buf(win, bufnr)
  vim.api.nvim_set_current_win(params.takeFocus == false and previous or win)
  return { success = true }
end

--- Whether a buffer is one of the explanation pages: for reading, never tokenized.
function M.is_explanation(bufnr)
  return vim.b[bufnr].glassllm_explanation == true
end

function M.setup(opts)
  local config = vim.tbl_deep_extend('force', M.defaults, opts or {})
  M.config = config
  local overrides = {}
  for _, key in ipairs({ 'cmd', 'filetypes', 'settings' }) do
    overrides[key] = config[key]
  end
  if next(overrides) then
    vim.lsp.config('glassllm', overrides)
  end
  if config.enable then
    vim.lsp.enable('glassllm')
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = vim.api.nvim_create_augroup('glassllm', { clear = true }),
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if not client or client.name ~= 'glassllm' then
        return
      end
      if config.inlay_hints then
        vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
      end
      if config.explain_key then
        vim.keymap.set({ 'n', 'x' }, config.explain_key, M.explain, {
          buffer = args.buf,
          desc = 'GlassLLM: explain BPE merges',
        })
      end
      if config.compare_key then
        vim.keymap.set({ 'n', 'x' }, config.compare_key, M.compare, {
          buffer = args.buf,
          desc = 'GlassLLM: compare tokenizers',
        })
      end
      watch(args.buf, config)
    end,
  })
end

return M
