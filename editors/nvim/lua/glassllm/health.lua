--- :checkhealth glassllm — is the server there, which Python runs it, does the tokenizer
--- setting load, is the server attached. Every problem line says what to do about it.
local M = {}

local health = vim.health

--- Run a command to the end (in folder `cwd`, if given); its trimmed output, or nil and
--- what went wrong.
local function run(command, cwd)
  local ok, process = pcall(vim.system, command, { text = true, cwd = cwd })
  if not ok then
    return nil, tostring(process)
  end
  local result = process:wait(20000)
  if result.code ~= 0 then
    return nil, vim.trim((result.stderr or '') .. (result.stdout or ''))
  end
  return vim.trim(result.stdout or '')
end

--- The configuration vim.lsp.enable('glassllm') uses (lsp/glassllm.lua and every
--- vim.lsp.config('glassllm', ...) over it).
local function configuration()
  local ok, config = pcall(function()
    return vim.lsp.config.glassllm
  end)
  return ok and config or nil
end

--- The Python of a console script: the interpreter on its `#!` line (pip and pipx write
--- the absolute path of the environment's Python there).
local function script_python(path)
  local file = io.open(path, 'rb')
  if not file then
    return nil
  end
  local first = file:read('*l') or ''
  file:close()
  local interpreter = first:match('^#!%s*(%S+)')
  if interpreter and vim.fs.basename(interpreter):match('^python') then
    return interpreter
  end
  return nil
end

local function check_neovim()
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()) .. ' has vim.lsp.config and vim.lsp.enable')
  else
    health.error('Neovim 0.11 or newer is needed', { 'Update Neovim: this plugin uses vim.lsp.config' })
  end
end

--- Finds the server and its version; returns the Python it runs on, if it can tell.
local function check_server(config)
  local cmd = config and config.cmd
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' then
    health.warn('the server command is a function or unset; not checked', {
      "vim.lsp.config('glassllm', { cmd = { 'glassllm-lsp' } })",
    })
    return nil
  end
  local path = vim.fn.exepath(cmd[1])
  if path == '' then
    health.error(cmd[1] .. ' is not found on the PATH', {
      'Install the server: pipx install . in the glassllm folder (or pip install . in the Python you use)',
      "Or give its full path: vim.lsp.config('glassllm', { cmd = { '/path/to/glassllm-lsp' } })",
    })
    return nil
  end
  local version, problem = run({ path, '--version' })
  if version then
    health.ok('server: ' .. version .. ' (' .. path .. ')')
  else
    health.error(path .. ' --version failed: ' .. problem, {
      'Reinstall it: pipx install --force . in the glassllm folder',
    })
  end
  local python = script_python(path)
  if not python then
    health.info('the server is not a Python console script; its Python is not checked')
    return nil
  end
  local found, error = run({ python, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])' })
  if not found then
    health.error('the Python of ' .. path .. ' does not run: ' .. python .. ': ' .. error, {
      'Its Python was moved or removed: pipx reinstall glassllm',
    })
    return nil
  end
  local major, minor = found:match('^(%d+)%.(%d+)')
  if tonumber(major) > 3 or (tonumber(major) == 3 and tonumber(minor) >= 11) then
    health.ok('Python ' .. found .. ' (' .. python .. ')')
  else
    health.error('Python ' .. found .. ' is too old (' .. python .. ')', {
      'glassllm needs Python 3.11 or newer: pipx install --force --python python3.11 . in the glassllm folder',
    })
  end
  return python
end

--- The `glassllm` section the server gets: the running client's, else the configured one.
local function server_settings(config)
  local client = vim.lsp.get_clients({ name = 'glassllm' })[1]
  local settings = (client and client.settings) or (config and config.settings) or {}
  return type(settings.glassllm) == 'table' and settings.glassllm or {}
end

--- Loads each tokenizer of the settings with the server's own Python and library.
local function check_tokenizers(config, python)
  local settings = server_settings(config)
  local tokenizer = settings.tokenizer
  local chosen = type(tokenizer) == 'string' and tokenizer ~= '' and tokenizer or 'pt'
  local origin = tokenizer and 'glassllm.tokenizer' or 'default'
  local wanted = { { chosen, origin } }
  for _, other in ipairs(type(settings.compareWith) == 'table' and settings.compareWith or {}) do
    wanted[#wanted + 1] = { other, 'glassllm.compareWith' }
  end
  if not python then
    health.info('tokenizer: ' .. chosen .. ' (' .. origin .. '); not loaded here without the server\'s Python')
    return
  end
  local load = table.concat({
    'import sys',
    'from glassllm import load_tokenizer',
    'from glassllm.packaged import load_problem',
    'try:',
    '    tokenizer = load_tokenizer(sys.argv[1])',
    '    print(f"{tokenizer.vocab_size} entries ({tokenizer.kind})")',
    'except (OSError, ValueError, KeyError) as error:',
    '    sys.exit(load_problem(error))',
  }, '\n')
  -- The server takes a relative path from its root folder: so does this check.
  local client = vim.lsp.get_clients({ name = 'glassllm' })[1]
  local root = client and client.root_dir or nil
  for _, item in ipairs(wanted) do
    local name, setting = item[1], item[2]
    local loaded, problem = run({ python, '-c', load, name }, root)
    if loaded then
      health.ok('tokenizer ' .. name .. ' (' .. setting .. ') loads: ' .. loaded)
    else
      health.error('tokenizer ' .. name .. ' (' .. setting .. ') does not load: ' .. problem, {
        "Use 'pt', 'en', the path of a tokenizer file (a glassllm JSON, a Hugging Face tokenizer.json, "
          .. "a Tekken JSON or a SentencePiece .model) or 'hf:ORG/NAME' (a model in the local Hugging Face cache)",
        "vim.lsp.config('glassllm', { settings = { glassllm = { tokenizer = 'pt' } } })",
      })
    end
  end
end

local function check_attached(config)
  local clients = vim.lsp.get_clients({ name = 'glassllm' })
  if #clients == 0 then
    health.warn('the server is not running', {
      "vim.lsp.enable('glassllm') in your init.lua (or require('glassllm').setup()), then open a "
        .. table.concat((config and config.filetypes) or { 'text', 'markdown' }, ' or ')
        .. ' file',
    })
    return
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_keys(client.attached_buffers)
    health.ok(
      ('server running (client %d, %s positions), attached to %d buffer%s'):format(
        client.id,
        client.offset_encoding,
        #buffers,
        #buffers == 1 and '' or 's'
      )
    )
  end
end

function M.check()
  health.start('glassllm: Neovim')
  check_neovim()
  local config = configuration()
  if not config then
    health.error('no glassllm configuration: lsp/glassllm.lua is not on the runtimepath', {
      'Install the plugin with your plugin manager, or add editors/nvim to the runtimepath',
    })
    return
  end
  health.start('glassllm: server')
  local python = check_server(config)
  health.start('glassllm: tokenizer')
  check_tokenizers(config, python)
  health.start('glassllm: this session')
  check_attached(config)
end

return M
