--- The glassllm language server for Neovim 0.11's vim.lsp.config: with this folder on the
--- runtimepath (any plugin manager puts it there), vim.lsp.enable('glassllm') starts
--- `glassllm-lsp` for text and Markdown. Override any field with
--- vim.lsp.config('glassllm', { ... }); see :help glassllm-setup.
---@type vim.lsp.Config
return {
  cmd = { 'glassllm-lsp' },
  filetypes = { 'text', 'markdown' },
  root_dir = function(bufnr, on_dir)
    -- Explanation pages are Markdown too, but they are for reading, not tokenizing.
    if not require('glassllm').is_explanation(bufnr) then
      on_dir(vim.fs.root(bufnr, '.git'))
    end
  end,
  -- Sent as the `glassllm` section: tokenizer 'pt', 'en' or a tokenizer JSON path,
  -- compareWith, locale, … (:help glassllm-settings).
  settings = { glassllm = {} },
  handlers = {
    ['window/showDocument'] = function(...)
      return require('glassllm').show_document(...)
    end,
    -- The tokenizers changed without an edit (a file that loaded after the settings
    -- named it): the statusline's counts are asked again.
    ['glassllm/tokenizersChanged'] = function(...)
      return require('glassllm').tokenizers_changed(...)
    end,
  },
}
