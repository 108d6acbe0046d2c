-- A complete ~/.config/nvim/init.lua for GlassLLM (Neovim 0.11+), with glassllm.lua copied
-- to ~/.config/nvim/lua/ (or editors/nvim added to the runtimepath).
require('glassllm').setup({
  -- The server's settings: tokenizer 'pt', 'en' or a path to a tokenizer JSON.
  settings = { glassllm = { tokenizer = 'pt' } },
})

-- The token count at the right of the statusline ("12/1,234 tokens" in visual mode).
vim.o.statusline = "%<%f %h%m%r%=%{v:lua.require'glassllm'.statusline()}  %l:%c "
