-- A complete ~/.config/nvim/init.lua for GlassLLM (Neovim 0.11+), with this plugin installed
-- by a plugin manager (or editors/nvim on the runtimepath). `vim.lsp.enable('glassllm')`
-- alone starts the server; setup() adds the keys, inlay hints and the statusline count.
require('glassllm').setup({
  -- The server's settings: tokenizer 'pt', 'en', the path of a tokenizer file (a glassllm
  -- JSON, or a real model's: Llama 3's tokenizer.json, Mistral's .model…) or 'hf:ORG/NAME'.
  -- compareWith: the tokenizers shown beside it (unset: the other packaged one; {} for none).
  settings = { glassllm = { tokenizer = 'pt' } },
  -- <leader>ge explains BPE merges, <leader>gc compares the tokenizers; true also puts the
  -- compared tokenizers' counts in the statusline.
  statusline_compare = false,
})

-- The token count at the right of the statusline ("12/1,234 tokens" in visual mode).
vim.o.statusline = "%<%f %h%m%r%=%{v:lua.require'glassllm'.statusline()}  %l:%c "
