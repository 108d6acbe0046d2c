;;; emacs_lsp_mode_model_session.el --- a real model's tokenizer through lsp-mode, for test_emacs_lsp_mode.py  -*- lexical-binding: t; -*-

;; Run as `emacs --batch -l emacs_lsp_mode_model_session.el' with GLASSLLM_INIT (lsp-mode
;; chosen and a `glassllm-settings' that names the model, then the README's lines),
;; GLASSLLM_FILE (the document), GLASSLLM_HOVER (where to hover), GLASSLLM_REGION (the
;; region for C-c g e), GLASSLLM_COUNT (the model's count, which the mode line must come
;; to show by itself) and GLASSLLM_OUT (where the JSON report goes). It records the mode
;; line's first count and the one it comes to, the hover as `lsp-describe-thing-at-point' shows it, and the
;; page C-c g e opens. See emacs_lsp_mode_session.el for what batch mode needs done by hand.

(load (expand-file-name "emacs_session_helpers.el" (file-name-directory load-file-name)) nil t)

(let ((file (getenv "GLASSLLM_FILE"))
      (report nil))
  (glassllm-test--start)
  (require 'lsp-mode)
  (setq lsp-session-file (expand-file-name "lsp-session" (getenv "HOME")))
  (lsp-workspace-folders-add (file-name-directory file))
  (switch-to-buffer (find-file-noselect file))
  (dolist (timer (copy-sequence timer-idle-list))  ; lsp-deferred starts lsp when idle
    (timer-event-handler timer))
  (glassllm-test--wait (lambda () (and (bound-and-true-p lsp-mode) (lsp-workspaces)
                                       (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized)))
                       "lsp-mode to connect")
  (setq report (append (glassllm-test--counts) report))
  (goto-char (string-to-number (getenv "GLASSLLM_HOVER")))
  (lsp-describe-thing-at-point)
  (push (cons "hover" (with-current-buffer "*lsp-help*" (buffer-substring-no-properties (point-min) (point-max)))) report)
  (switch-to-buffer (get-file-buffer file))
  (let ((before (buffer-list))
        (region (mapcar #'string-to-number (split-string (getenv "GLASSLLM_REGION")))))
    (goto-char (car region))
    (push-mark (cadr region) t t)
    (exchange-point-and-mark)
    (call-interactively (key-binding (kbd "C-c g e")))
    (deactivate-mark)
    (let ((page (glassllm-test--wait
                 (lambda () (seq-find (lambda (buffer)
                                        (and (not (memq buffer before)) (buffer-file-name buffer)
                                             (string-match-p "/glassllm/explain-" (buffer-file-name buffer))))
                                      (buffer-list)))
                 "the explanation page")))
      (push (cons "page" (with-current-buffer page (buffer-substring-no-properties (point-min) (point-max)))) report)))
  (with-temp-file (getenv "GLASSLLM_OUT")
    (set-buffer-file-coding-system 'utf-8)
    (insert (json-encode report)))
  (kill-emacs 0))

;;; emacs_lsp_mode_model_session.el ends here
