;;; emacs_session.el --- one GlassLLM session in a real Emacs, for test_emacs.py  -*- lexical-binding: t; -*-

;; Run as `emacs --batch -l emacs_session.el' with GLASSLLM_INIT (the README's init
;; lines), GLASSLLM_FILE (the document), GLASSLLM_HOVER (where to hover), GLASSLLM_REGION
;; (the region for C-c g e), GLASSLLM_EDIT (where to insert what, base64, and where to
;; hover then) and GLASSLLM_OUT (where the JSON report goes). It visits the file and
;; records what eglot got: diagnostics, the count in the mode line, inlay hints, a
;; hover, the pages that C-c g e and C-c g c open on a region, the URL that C-c g E
;; hands to the browser, and the count and a hover after an edit.
;;
;; Batch mode runs no command loop and no idle timers: what they would do is done here
;; explicitly (post-command-hook for eglot-ensure, didChange after an edit, the hint
;; request that jit-lock would make). Positions are reported as 0-based code-point
;; offsets into the buffer's text.

(load (expand-file-name "emacs_session_helpers.el" (file-name-directory load-file-name)) nil t)

(defun glassllm-test--hover-at (position)
  "The hover at POSITION: (:eldoc what eldoc shows :visible that text less what
markdown-mode hides :raw the server's Markdown :range its range as offsets)."
  (goto-char position)
  (let* ((shown nil)
         (server (eglot-current-server))
         (answer (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams)))
         (range (plist-get answer :range))
         (region (eglot-range-region range)))
    (eglot-hover-eldoc-function (lambda (info &rest _) (setq shown (or info ""))))
    (glassllm-test--wait (lambda () shown) "the eldoc hover")
    (list :eldoc (substring-no-properties shown)
          :visible (apply #'string
                          (seq-filter #'identity
                                      (seq-map-indexed
                                       (lambda (char index)
                                         (unless (invisible-p (get-text-property index 'invisible shown))
                                           char))
                                       shown)))
          :raw (plist-get (plist-get answer :contents) :value)
          :range (vector (glassllm-test--offset (car region)) (glassllm-test--offset (cdr region))))))

(defun glassllm-test--hints ()
  "Ask for the whole buffer's inlay hints as jit-lock would and return them as
(offset label) lists once they are drawn."
  (remove-overlays (point-min) (point-max) 'eglot--inlay-hint t)
  (eglot--update-hints-1 (point-min) (point-max))
  (glassllm-test--wait
   (lambda () (seq-some (lambda (o) (overlay-get o 'eglot--inlay-hint)) (overlays-in (point-min) (point-max))))
   "inlay hints")
  (vconcat
   (sort (seq-keep (lambda (overlay)
                    (when (overlay-get overlay 'eglot--inlay-hint)
                      (let ((before (overlay-get overlay 'before-string)))
                        (vector (glassllm-test--offset (if before (overlay-start overlay) (overlay-end overlay)))
                              (substring-no-properties (or before (overlay-get overlay 'after-string)))))))
                  (overlays-in (point-min) (point-max)))
        (lambda (a b) (< (aref a 0) (aref b 0))))))

(let ((file (getenv "GLASSLLM_FILE"))
      (report nil))
  (glassllm-test--start)
  (switch-to-buffer (find-file-noselect file))
  (run-hooks 'post-command-hook)  ; eglot-ensure connects from there
  (glassllm-test--wait (lambda () (and (eglot-current-server) eglot--managed-mode)) "eglot to connect")
  (push (cons "mode" (symbol-name major-mode)) report)
  (push (cons "markdown_mode" (and (fboundp 'gfm-view-mode) t)) report)
  ;; What glassllm.el declared, as this Emacs read it: the default command, the modes,
  ;; the program eglot starts for each of them, and the settings eglot answers
  ;; workspace/configuration with (json-encode writes plists as objects, as eglot does).
  (push (cons "default_command" (vconcat (eval (car (get 'glassllm-server-command 'standard-value)) t))) report)
  (push (cons "modes" (vconcat (mapcar #'symbol-name glassllm-modes))) report)
  (push (cons "programs"
              (mapcar (lambda (mode)
                        (let ((entry (seq-find (lambda (entry)
                                                 (memq mode (ensure-list (car entry))))
                                               eglot-server-programs)))
                          (cons (symbol-name mode) (vconcat (funcall (cdr entry))))))
                      glassllm-modes))
        report)
  (push (cons "workspace_configuration" (default-value 'eglot-workspace-configuration)) report)
  (push (cons "encoding" (plist-get (eglot--capabilities (eglot-current-server)) :positionEncoding)) report)
  (push (cons "diagnostics" (glassllm-test--diagnostics)) report)
  (glassllm-test--wait (lambda () (not (string-empty-p (glassllm-test--count)))) "the token count")
  (push (cons "count" (glassllm-test--count)) report)
  (push (cons "hints" (glassllm-test--hints)) report)
  (push (cons "hover" (glassllm-test--hover-at (string-to-number (getenv "GLASSLLM_HOVER")))) report)
  ;; C-c g e, then C-c g c, on a region, as the keys would run them.
  (setq report (append (glassllm-test--page-entries (glassllm-test--keys-on-region "C-c g e" "the explanation page"))
                       report))
  (let ((ran (glassllm-test--keys-on-region "C-c g c" "the comparison page")))
    (push (cons "compare_key" (symbol-name (car ran))) report)
    (push (cons "compare_page" (with-current-buffer (cdr ran) (buffer-substring-no-properties (point-min) (point-max))))
          report))
  ;; The page took the focus, as pages do: back to the document.
  (switch-to-buffer (get-file-buffer file))
  ;; C-c g E on the region: eglot hands the page's URL to `browse-url'; no browser runs
  ;; in batch mode, so the browser function only keeps the URL.
  (let* ((opened nil)
         (browse-url-browser-function (lambda (url &rest _) (push url opened)))
         (browse-url-handlers nil)
         (region (mapcar #'string-to-number (split-string (getenv "GLASSLLM_REGION"))))
         (command (key-binding (kbd "C-c g E"))))
    (goto-char (car region))
    (push-mark (cadr region) t t)
    (exchange-point-and-mark)
    (call-interactively command)
    (deactivate-mark)
    (glassllm-test--wait (lambda () opened) "the page handed to the browser")
    (push (cons "browser_key" (symbol-name command)) report)
    (push (cons "browser_urls" (vconcat opened)) report))
  (switch-to-buffer (get-file-buffer file))
  ;; M-x glassllm-token-map: the token map of the project, handed to `browse-url' the same way.
  (let* ((opened nil)
         (browse-url-browser-function (lambda (url &rest _) (push url opened)))
         (browse-url-handlers nil))
    (call-interactively #'glassllm-token-map)
    (glassllm-test--wait (lambda () opened) "the token map handed to the browser")
    (push (cons "token_map_urls" (vconcat opened)) report))
  (switch-to-buffer (get-file-buffer file))
  ;; An edit, then a hover on the edited text.
  (let ((edit (split-string (getenv "GLASSLLM_EDIT") " ")))
    (goto-char (string-to-number (car edit)))
    (insert (decode-coding-string (base64-decode-string (cadr edit)) 'utf-8))
    (let ((before (glassllm-test--count)))
      (eglot--signal-textDocument/didChange)
      (glassllm-test--wait (lambda () (not (equal (glassllm-test--count) before))) "the count after the edit"))
    (push (cons "edited_count" (glassllm-test--count)) report)
    (push (cons "edited_text" (buffer-substring-no-properties (point-min) (point-max))) report)
    (push (cons "edited_hover" (glassllm-test--hover-at (string-to-number (nth 2 edit)))) report))
  (glassllm-test--finish report))

;;; emacs_session.el ends here
