;;; emacs_model_session.el --- GlassLLM with a real model's tokenizer in Emacs, for test_emacs.py  -*- lexical-binding: t; -*-

;; Run as `emacs --batch -l emacs_model_session.el' with GLASSLLM_INIT (the README's init
;; lines after a `glassllm-settings' that names the model), GLASSLLM_FILE (the document),
;; GLASSLLM_HOVERS (where to hover, space-separated positions), GLASSLLM_REGION (the region
;; for C-c g c), GLASSLLM_COUNT (the model's count, which the mode line must come to show
;; by itself) and GLASSLLM_OUT (where the JSON report goes). It records the mode line's
;; first count and the one it comes to, the hovers (eglot's answer and what eldoc shows), and the comparison page.
;; Batch mode has no command loop: see emacs_session.el for what is done by hand.

(load (expand-file-name "emacs_session_helpers.el" (file-name-directory load-file-name)) nil t)

(defun glassllm-test--hover-at (position)
  "The hover at POSITION: (:raw the server's Markdown :eldoc what eldoc shows :range
its range as 0-based offsets)."
  (goto-char position)
  (let* ((shown nil)
         (answer (jsonrpc-request (eglot-current-server) :textDocument/hover
                                  (eglot--TextDocumentPositionParams)))
         (region (eglot-range-region (plist-get answer :range))))
    (eglot-hover-eldoc-function (lambda (info &rest _) (setq shown (or info ""))))
    (glassllm-test--wait (lambda () shown) "the eldoc hover")
    (list :raw (plist-get (plist-get answer :contents) :value)
          :eldoc (substring-no-properties shown)
          :range (vector (1- (car region)) (1- (cdr region))))))

(let ((file (getenv "GLASSLLM_FILE"))
      (report nil))
  (glassllm-test--start)
  (switch-to-buffer (find-file-noselect file))
  (run-hooks 'post-command-hook)  ; eglot-ensure connects from there
  (glassllm-test--wait (lambda () (and (eglot-current-server) eglot--managed-mode)) "eglot to connect")
  (push (cons "workspace_configuration" (default-value 'eglot-workspace-configuration)) report)
  (setq report (append (glassllm-test--counts) report))
  (push (cons "hovers"
              (vconcat (mapcar (lambda (position) (glassllm-test--hover-at (string-to-number position)))
                               (split-string (getenv "GLASSLLM_HOVERS")))))
        report)
  ;; C-c g c on the region, as the keys run it.
  (let ((before (buffer-list))
        (region (mapcar #'string-to-number (split-string (getenv "GLASSLLM_REGION")))))
    (goto-char (car region))
    (push-mark (cadr region) t t)
    (exchange-point-and-mark)
    (call-interactively (key-binding (kbd "C-c g c")))
    (deactivate-mark)
    (let ((page (glassllm-test--wait
                 (lambda ()
                   (seq-find (lambda (buffer)
                               (and (not (memq buffer before))
                                    (buffer-file-name buffer)
                                    (string-match-p "/glassllm/" (buffer-file-name buffer))))
                             (buffer-list)))
                 "the comparison page")))
      (push (cons "compare_page" (with-current-buffer page (buffer-substring-no-properties (point-min) (point-max))))
            report)))
  (with-temp-file (getenv "GLASSLLM_OUT")
    (set-buffer-file-coding-system 'utf-8)
    (insert (json-encode report)))
  (kill-emacs 0))

;;; emacs_model_session.el ends here
