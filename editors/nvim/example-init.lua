-- A complete ~/.config/nvim/init.lua for GlassLLM (Neovim 0.11+), with glassllm.lua copied
-- to ~/.config/nvim/lua/ (or editors/nvim added to the runtimepath).
require('glassllm').setup({
  -- The server's settings: tokenizer 'pt', 'en' or a path to a tokenizer JSON.
  -- compareWith: the tokenizers shown beside it (unset: the other packaged one; {} for none).
  settings = { glassllm = { tokenizer = 'pt' } },
  -- <leader>ge explains BPE merges, <leader>gc compares the tokenizers; true also puts the
  -- compared tokenizers' counts in the statusline.
  statusline_compare = false,
})

-- The token count at the right of the statusline ("12/1,234 tokens" in visual mode).
vim.o.statusline = "%<%f %h%m%r%=%{v:lua.require'glassllm'.statusline()}  %l:%c "
