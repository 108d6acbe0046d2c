;;; glassllm.el --- GlassLLM through eglot (Emacs 29+)  -*- lexical-binding: t; -*-

;; Put this in your init file, or load it: (load "/path/to/editors/emacs/glassllm.el").

(require 'eglot)

;; Eglot matches derived modes too: this covers markdown-mode, org-mode and every other
;; mode built on text-mode. Eglot runs one server per buffer, and this entry comes first.
(add-to-list 'eglot-server-programs '((text-mode markdown-mode) . ("glassllm-lsp")))

;; The server's settings, the answer to workspace/configuration.
(setq-default eglot-workspace-configuration
              '(:glassllm (:tokenizer "pt"
                           :inlayHints (:chunkBoundaries t
                                        :spaceMarkers t
                                        :tokenBoundaries :json-false))))

;; Start the server in every text buffer (markdown-mode runs this hook too).
(add-hook 'text-mode-hook #'eglot-ensure)

;; C-c g e: code actions on the region or at point; choose "Explain BPE merges".
(define-key eglot-mode-map (kbd "C-c g e") #'eglot-code-actions)

;;; glassllm.el ends here
