//! Zed starts language servers only through extensions: this one starts `glassllm-lsp`
//! from the project's PATH (or `lsp.glassllm.binary` in the settings) and hands it the
//! `lsp.glassllm.settings` object.
use zed_extension_api::{self as zed, serde_json::Value, settings::LspSettings, LanguageServerId, Result};

struct GlassLlm;

impl zed::Extension for GlassLlm {
    fn new() -> Self {
        GlassLlm
    }

    fn language_server_command(&mut self, server_id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let args = binary.as_ref().and_then(|binary| binary.arguments.clone()).unwrap_or_default();
        let command = binary
            .and_then(|binary| binary.path)
            .or_else(|| worktree.which("glassllm-lsp"))
            .ok_or("glassllm-lsp is not on the PATH: install glassllm or set lsp.glassllm.binary.path")?;
        Ok(zed::Command { command, args, env: worktree.shell_env() })
    }

    fn language_server_initialization_options(
        &mut self,
        server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<Value>> {
        self.language_server_workspace_configuration(server_id, worktree)
    }

    fn language_server_workspace_configuration(
        &mut self,
        server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<Value>> {
        Ok(LspSettings::for_worktree(server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.settings))
    }
}

zed::register_extension!(GlassLlm);
