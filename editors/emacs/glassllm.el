;;; glassllm.el --- GlassLLM through eglot  -*- lexical-binding: t; -*-

;; Needs Emacs 29 or later (eglot is built in from 29 on; Debian 12's Emacs is 28: take
;; Emacs 30 from bookworm-backports, or on Emacs 28 install eglot from GNU ELPA).
;; Hovers are Markdown: install markdown-mode to see them rendered.
;;
;; Load this file from your init file, with its real path:
;;   (load "~/src/glassllm/editors/emacs/glassllm.el")
;; To change a variable below, set it before that line.

(require 'eglot)

(defgroup glassllm nil
  "GlassLLM's tokenizer in the editor, through eglot."
  :group 'eglot)

(defcustom glassllm-server-command '("glassllm-lsp")
  "How to start the server: a program and its arguments.
The program is looked up in `exec-path'; a virtual environment that is not on it needs
the full path, for example (\"/home/ana/.venvs/glassllm/bin/glassllm-lsp\")."
  :type '(repeat string))

(defcustom glassllm-modes '(text-mode markdown-mode gfm-mode)
  "The major modes whose buffers start the server: plain text and Markdown.
Modes derived from these that are not listed (Org, commit messages, ...) do not.
Set it before loading this file."
  :type '(repeat symbol))

;; Ahead of other entries, so Markdown gets this server instead of marksman: eglot gives
;; a buffer one server. Read at start time, so `glassllm-server-command' may change later.
(add-to-list 'eglot-server-programs
             `(,glassllm-modes . ,(lambda (&optional _interactive) glassllm-server-command)))

;; The server's settings: eglot answers workspace/configuration with them.
(setq-default eglot-workspace-configuration
              '(:glassllm (:tokenizer "pt"
                           :inlayHints (:chunkBoundaries t
                                        :spaceMarkers t
                                        :tokenBoundaries :json-false))))

(defun glassllm-explain (beg end)
  "Explain the BPE merges of the region from BEG to END, or of the token at point."
  (interactive (if (use-region-p)
                   (list (region-beginning) (region-end))
                 (list (point) (point))))
  ;; The server's one code action has the empty kind: asking for that kind runs it
  ;; without a menu.
  (eglot-code-actions beg end "" t))

(defvar glassllm-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c g e") #'glassllm-explain)
    map)
  "Keys of `glassllm-mode'.")

(define-minor-mode glassllm-mode
  "GlassLLM's keys in a buffer that eglot connects to glassllm-lsp.
\\{glassllm-mode-map}"
  :keymap glassllm-mode-map)

(defun glassllm-ensure ()
  "Start the server (`eglot-ensure') in a buffer whose major mode is in `glassllm-modes'."
  (when (memq major-mode glassllm-modes)
    (glassllm-mode 1)
    (eglot-ensure)))

;; text-mode-hook runs for every mode derived from text-mode; `glassllm-ensure' keeps
;; to `glassllm-modes'.
(add-hook 'text-mode-hook #'glassllm-ensure)

(provide 'glassllm)
;;; glassllm.el ends here
