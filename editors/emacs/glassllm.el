;;; glassllm.el --- GlassLLM through eglot  -*- lexical-binding: t; -*-

;; Needs eglot: built into Emacs 29 and later; on Emacs 28 (Debian 12, Ubuntu 22.04)
;; install it from GNU ELPA, or take Emacs 30 from bookworm-backports. Hovers are
;; Markdown: install markdown-mode to see them rendered.
;;
;; Load this file from your init file, with its real path, after setting any variable
;; below that you change (the server's command, if glassllm-lsp is not on exec-path):
;;   (setq glassllm-server-command '("/home/ana/.venvs/glassllm/bin/glassllm-lsp"))
;;   (load "/home/ana/src/glassllm/editors/emacs/glassllm.el")

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
Modes derived from these that are not listed (Org, commit messages, ...) do not start
it, though eglot gives them the server once it runs in their project, since eglot
matches derived modes. Set this before loading this file."
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

(defun glassllm--lsp-position (pos)
  "The LSP position of POS, its column counted in the encoding eglot negotiated."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      ;; LSP lines count from 0, Emacs lines from 1.
      (list :line (1- (line-number-at-pos pos t))
            :character (funcall eglot-current-linepos-function)))))

(defun glassllm--run (command beg end)
  "Run the server's COMMAND on the region from BEG to END, as its code action would."
  (let ((server (or (eglot-current-server)
                    (user-error "No glassllm server in this buffer (see `glassllm-ensure')"))))
    ;; The command itself, not the code action menu: the server offers two actions
    ;; (explain, compare) with the same kind, and a key should not ask which one.
    (eglot-execute server
                   `(:command ,command
                     :arguments [,(eglot-path-to-uri (buffer-file-name))
                                 (:start ,(glassllm--lsp-position beg)
                                  :end ,(glassllm--lsp-position end))]))))

(defun glassllm--region ()
  (if (use-region-p)
      (list (region-beginning) (region-end))
    (list (point) (point))))

(defun glassllm-explain (beg end)
  "Explain the BPE merges of the region from BEG to END, or of the token at point."
  (interactive (glassllm--region))
  (glassllm--run "glassllm.explainMerges" beg end))

(defun glassllm-compare (beg end)
  "Compare the tokenizers on the region from BEG to END, or on the token at point."
  (interactive (glassllm--region))
  (glassllm--run "glassllm.compareTokenizers" beg end))

(defvar glassllm-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c g e") #'glassllm-explain)
    (define-key map (kbd "C-c g c") #'glassllm-compare)
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

;; text-mode-hook runs for every mode derived from text-mode; `glassllm-ensure' starts
;; the server only from `glassllm-modes'.
(add-hook 'text-mode-hook #'glassllm-ensure)

(provide 'glassllm)
;;; glassllm.el ends here
