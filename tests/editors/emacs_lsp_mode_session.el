;;; emacs_lsp_mode_session.el --- one glassllm session through lsp-mode, for test_emacs_lsp_mode.py  -*- lexical-binding: t; -*-

;; Run as `emacs --batch -l emacs_lsp_mode_session.el' with GLASSLLM_INIT (the init
;; lines: `glassllm-client' set to lsp-mode, then the README's), GLASSLLM_FILE (the
;; document), GLASSLLM_HOVER (where to hover), GLASSLLM_REGION (the region for C-c g e),
;; GLASSLLM_EDIT (base64 text inserted at the start) and GLASSLLM_OUT (where the JSON
;; report goes).  It records what lsp-mode shows: the faces on the text, the
;; diagnostics, the hover, the mode line's count before and after an edit, and the page
;; C-c g e opens.
;;
;; Batch mode runs no command loop, no redisplay and no idle timers: what they would do
;; is done here (the idle timer of `lsp-deferred', the fontification jit-lock would
;; ask for, flymake's start).  Positions are 0-based code-point offsets.

(load (expand-file-name "emacs_session_helpers.el" (file-name-directory load-file-name)) nil t)

(defun glassllm-test--run-idle-timers ()
  "Run the idle timers due, as an idle Emacs would."
  (dolist (timer (copy-sequence timer-idle-list))
    (timer-event-handler timer)))

(defun glassllm-test--faces ()
  "Fontify the buffer as jit-lock would and return (start end face) of each run of
an lsp-mode semantic face."
  (font-lock-set-defaults)
  (funcall font-lock-fontify-region-function (point-min) (point-max) nil)
  (let ((runs nil) (pos (point-min)))
    (while (< pos (point-max))
      (let* ((next (next-single-property-change pos 'face nil (point-max)))
             (faces (ensure-list (get-text-property pos 'face)))
             (semantic (seq-find (lambda (face) (string-prefix-p "lsp-face-semhl-" (symbol-name face))) faces)))
        (when semantic
          (push (vector (glassllm-test--offset pos) (glassllm-test--offset next) (symbol-name semantic)) runs))
        (setq pos next)))
    (vconcat (nreverse runs))))

(let ((file (getenv "GLASSLLM_FILE"))
      (report nil))
  (glassllm-test--start)
  (push (cons "eglot_loaded" (and (featurep 'eglot) t)) report)
  ;; The folder as an lsp-mode project, as `lsp' would ask the first time.
  (require 'lsp-mode)
  (setq lsp-session-file (expand-file-name "lsp-session" (getenv "HOME")))
  (lsp-workspace-folders-add (file-name-directory file))
  (switch-to-buffer (find-file-noselect file))
  (push (cons "glassllm_mode" glassllm-mode) report)
  (glassllm-test--run-idle-timers)  ; lsp-deferred starts lsp from an idle timer
  (glassllm-test--wait (lambda () (and (bound-and-true-p lsp-mode) (lsp-workspaces)
                                       (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized)))
                       "lsp-mode to connect")
  (push (cons "mode" (symbol-name major-mode)) report)
  (push (cons "servers" (vconcat (mapcar (lambda (workspace)
                                           (symbol-name (lsp--client-server-id (lsp--workspace-client workspace))))
                                         (lsp-workspaces))))
        report)
  (push (cons "semantic_tokens" (and lsp-semantic-tokens-enable t)) report)
  ;; The faces, once the tokens have come (the first fontification asks for them).
  (let ((faces nil))
    (glassllm-test--wait (lambda () (setq faces (glassllm-test--faces)) (> (length faces) 0)) "the semantic faces")
    (push (cons "faces" faces) report))
  ;; The diagnostics, as flymake (or flycheck) shows them.
  (push (cons "checker" (cond ((bound-and-true-p flycheck-mode) "flycheck") ((bound-and-true-p flymake-mode) "flymake"))) report)
  (flymake-start)
  (push (cons "diagnostics" (glassllm-test--diagnostics)) report)
  ;; The hover, as `lsp-describe-thing-at-point' shows it.
  (goto-char (string-to-number (getenv "GLASSLLM_HOVER")))
  (lsp-describe-thing-at-point)
  (push (cons "hover" (with-current-buffer "*lsp-help*" (buffer-substring-no-properties (point-min) (point-max)))) report)
  (switch-to-buffer (get-file-buffer file))
  ;; The count in the mode line.
  (glassllm-test--wait (lambda () (not (string-empty-p (glassllm-test--count)))) "the token count")
  (push (cons "count" (glassllm-test--count)) report)
  ;; C-c g e on a region.
  (let* ((ran (glassllm-test--keys-on-region "C-c g e" "the explanation page"))
         (page (cdr ran)))
    (setq report (append (glassllm-test--page-entries ran) report))
    (push (cons "page_served" (buffer-local-value 'glassllm-mode page)) report)
    (push (cons "messages" (with-current-buffer (messages-buffer) (buffer-substring-no-properties (point-min) (point-max))))
          report))
  (switch-to-buffer (get-file-buffer file))
  ;; An edit: lsp-mode sends it at once, and the count follows.
  (let ((before (glassllm-test--count)))
    (goto-char (point-min))
    (insert (decode-coding-string (base64-decode-string (getenv "GLASSLLM_EDIT")) 'utf-8))
    (glassllm-test--wait (lambda () (not (equal (glassllm-test--count) before))) "the count after the edit")
    (push (cons "edited_count" (glassllm-test--count)) report)
    (push (cons "edited_text" (buffer-substring-no-properties (point-min) (point-max))) report))
  (glassllm-test--finish report))

;;; emacs_lsp_mode_session.el ends here
