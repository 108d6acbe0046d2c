;;; emacs_budget_session.el --- a token budget in Emacs, eglot or lsp-mode, for test_emacs.py and test_emacs_lsp_mode.py  -*- lexical-binding: t; -*-

;; Run as `emacs --batch -l emacs_budget_session.el' with GLASSLLM_INIT (the init lines:
;; the client, the README's, and for eglot a `glassllm-settings' with a budget),
;; GLASSLLM_FILE (the document, under its budget), GLASSLLM_EDIT (base64 text appended,
;; which passes it) and GLASSLLM_OUT (where the JSON report goes).  It records the budget
;; diagnostics flymake shows and the mode line, under the budget, after typing past it,
;; and after deleting back under it.  Batch mode runs no command loop and no idle timers:
;; what they would do is done here (see emacs_session.el and emacs_lsp_mode_session.el).

(load (expand-file-name "emacs_session_helpers.el" (file-name-directory load-file-name)) nil t)

(defun glassllm-test--budget ()
  "The budget diagnostics flymake shows: (start end type text), 0-based offsets."
  (when (bound-and-true-p lsp-mode)
    (flymake-start))
  (vconcat
   (mapcar (lambda (diagnostic)
             (vector (glassllm-test--offset (flymake-diagnostic-beg diagnostic))
                     (glassllm-test--offset (flymake-diagnostic-end diagnostic))
                     (symbol-name (flymake-diagnostic-type diagnostic))
                     (flymake-diagnostic-text diagnostic)))
           (seq-filter (lambda (diagnostic) (string-match-p "token [0-9.,]+ \\(de\\|of\\) "
                                                            (flymake-diagnostic-text diagnostic)))
                       (flymake-diagnostics)))))

(defun glassllm-test--connect (file)
  "Visit FILE and wait until its client (eglot or lsp-mode) is connected."
  (if (eq glassllm-client 'lsp-mode)
      (progn
        (require 'lsp-mode)
        (setq lsp-session-file (expand-file-name "lsp-session" (getenv "HOME")))
        (lsp-workspace-folders-add (file-name-directory file))
        (switch-to-buffer (find-file-noselect file))
        (dolist (timer (copy-sequence timer-idle-list))  ; lsp-deferred starts from an idle timer
          (timer-event-handler timer))
        (glassllm-test--wait (lambda () (and (bound-and-true-p lsp-mode) (lsp-workspaces)
                                             (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized)))
                             "lsp-mode to connect")
        (flymake-start))
    (switch-to-buffer (find-file-noselect file))
    (run-hooks 'post-command-hook)  ; eglot-ensure connects from there
    (glassllm-test--wait (lambda () (and (eglot-current-server) eglot--managed-mode)) "eglot to connect")))

(defun glassllm-test--changed ()
  "Tell the server of the edit: lsp-mode sends it at once, eglot from a timer."
  (unless (bound-and-true-p lsp-mode)
    (eglot--signal-textDocument/didChange)))

(let ((file (getenv "GLASSLLM_FILE"))
      (report nil))
  (glassllm-test--start)
  (glassllm-test--connect file)
  (push (cons "client" (symbol-name glassllm-client)) report)
  (glassllm-test--wait (lambda () (string-match-p " / " (glassllm-test--count))) "the budget in the mode line")
  (push (cons "count" (glassllm-test--count)) report)
  ;; The first diagnostics (the unknown characters'), with no budget among them.
  (glassllm-test--diagnostics)
  (push (cons "under" (glassllm-test--budget)) report)
  (let ((before (glassllm-test--count))
        (end (point-max)))
    (goto-char end)
    (insert (decode-coding-string (base64-decode-string (getenv "GLASSLLM_EDIT")) 'utf-8))
    (glassllm-test--changed)
    (glassllm-test--wait (lambda () (= (length (glassllm-test--budget)) 1)) "the budget diagnostic")
    (push (cons "over" (glassllm-test--budget)) report)
    (glassllm-test--wait (lambda () (not (equal (glassllm-test--count) before))) "the count after the edit")
    (push (cons "over_count" (glassllm-test--count)) report)
    (delete-region end (point-max))
    (glassllm-test--changed)
    (glassllm-test--wait (lambda () (= (length (glassllm-test--budget)) 0)) "the budget diagnostic to go")
    (glassllm-test--wait (lambda () (equal (glassllm-test--count) before)) "the count back under the budget")
    (push (cons "back" (glassllm-test--budget)) report)
    (push (cons "back_count" (glassllm-test--count)) report))
  (glassllm-test--finish report))

;;; emacs_budget_session.el ends here
