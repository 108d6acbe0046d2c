-- What must exist before any buffer opens: the :GlassLLM command. Everything else loads
-- on first use (require('glassllm')), and the server starts only through vim.lsp.enable.
if vim.g.loaded_glassllm then
  return
end
vim.g.loaded_glassllm = true

--- The lines a command was given (:'<,'>GlassLLM explain), as a code action range.
local function lines(command)
  if command.range == 0 then
    return nil
  end
  local last = vim.api.nvim_buf_get_lines(0, command.line2 - 1, command.line2, true)[1]
  return { start = { command.line1, 0 }, ['end'] = { command.line2, #last } }
end

local actions = {
  explain = function(command)
    require('glassllm').explain(lines(command))
  end,
  compare = function(command)
    require('glassllm').compare(lines(command))
  end,
  ['explain-in-browser'] = function(command)
    require('glassllm').explain_in_browser(lines(command))
  end,
  ['compare-in-browser'] = function(command)
    require('glassllm').compare_in_browser(lines(command))
  end,
  ['token-map'] = function()
    require('glassllm').token_map()
  end,
  health = function()
    vim.cmd.checkhealth('glassllm')
  end,
}

vim.api.nvim_create_user_command('GlassLLM', function(command)
  local action = actions[command.args]
  if not action then
    local message = 'GlassLLM: unknown action ' .. vim.inspect(command.args) .. '; use explain, compare, explain-in-browser, compare-in-browser, token-map or health'
    vim.notify(message, vim.log.levels.ERROR)
    return
  end
  action(command)
end, {
  nargs = 1,
  range = true,
  desc = 'GlassLLM: explain BPE merges, compare tokenizers (in the editor or a browser), map the workspace\'s tokens, or check the setup',
  complete = function(lead)
    return vim.tbl_filter(function(name)
      return vim.startswith(name, lead)
    end, vim.tbl_keys(actions))
  end,
})
