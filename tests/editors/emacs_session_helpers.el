;;; emacs_session_helpers.el --- what the Emacs test sessions share  -*- lexical-binding: t; -*-

;; Loaded by emacs_session.el (eglot) and emacs_lsp_mode_session.el (lsp-mode), each run
;; as `emacs --batch -l SESSION': a user's startup, waiting for what the server sends, the
;; mode line's count, the diagnostics as flymake shows them, keys run on the region
;; GLASSLLM_REGION, and the JSON report written to GLASSLLM_OUT.  Positions are 0-based
;; code-point offsets into the buffer's text.

(require 'json)
(require 'seq)

(defun glassllm-test--wait (predicate what &optional seconds)
  "Process output and timers until PREDICATE is non-nil; signal an error naming WHAT
after SECONDS (30 by default)."
  (let ((deadline (+ (float-time) (or seconds 30))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall predicate) (error "Timed out waiting for %s" what))))

(defun glassllm-test--start ()
  "What a user's Emacs does at startup: the packages installed from ELPA or Debian
\(markdown-mode, lsp-mode) become available, and the init file GLASSLLM_INIT (the
README's lines, with this machine's paths) is loaded."
  (package-activate-all)
  (load (getenv "GLASSLLM_INIT") nil t)
  (transient-mark-mode 1))

(defun glassllm-test--offset (position)
  (1- position))

(defun glassllm-test--count ()
  "The glassllm part of the mode line: its lighter in `minor-mode-alist', an
\=(:eval FORM) construct, evaluated as redisplay would (`format-mode-line' gives
nothing in batch mode, which has no frame to draw)."
  (pcase (cadr (assq 'glassllm-mode minor-mode-alist))
    (`(:eval ,form) (string-trim (eval form t)))
    (lighter (error "Unexpected lighter %S" lighter))))

(defun glassllm-test--model-count ()
  "The mode line's count once it is GLASSLLM_COUNT, the model's count (an error naming
what it shows instead after 30 s).  The model loads off the server's event loop (a
second or more): when its load outlasts the moment the first count waits for it, that
count is the packaged tokenizer's, and the server's glassllm/tokenizersChanged, sent
once the model is in use, makes the mode line ask again without an edit."
  (let ((expected (getenv "GLASSLLM_COUNT")))
    (condition-case nil
        (glassllm-test--wait (lambda () (equal (glassllm-test--count) expected)) expected)
      (error (error "The mode line shows %S, never the model's count, %s" (glassllm-test--count) expected)))
    (glassllm-test--count)))

(defun glassllm-test--counts ()
  "What the mode line counted, as report entries: its first count, the one it comes
to (`glassllm-test--model-count'), and whether the buffer was edited meanwhile."
  (glassllm-test--wait (lambda () (not (string-empty-p (glassllm-test--count)))) "the token count")
  (let ((first (glassllm-test--count))
        (edits (buffer-chars-modified-tick)))
    (list (cons "first_count" first)
          (cons "count" (glassllm-test--model-count))
          (cons "edited" (if (= edits (buffer-chars-modified-tick)) :json-false t)))))

(defun glassllm-test--diagnostics ()
  "The buffer's flymake diagnostics, once there are some, in order: (start end type text)."
  (glassllm-test--wait (lambda () (flymake-diagnostics)) "the diagnostics")
  (vconcat
   (sort (mapcar (lambda (diagnostic)
                  (vector (glassllm-test--offset (flymake-diagnostic-beg diagnostic))
                        (glassllm-test--offset (flymake-diagnostic-end diagnostic))
                        (symbol-name (flymake-diagnostic-type diagnostic))
                        (flymake-diagnostic-text diagnostic)))
                (flymake-diagnostics))
        (lambda (a b) (< (aref a 0) (aref b 0))))))

(defun glassllm-test--page-buffer (before)
  "A buffer visiting a page of glassllm's that was not among BEFORE."
  (seq-find (lambda (buffer)
              (and (not (memq buffer before))
                   (buffer-file-name buffer)
                   (string-match-p "/glassllm/" (buffer-file-name buffer))))
            (buffer-list)))

(defun glassllm-test--keys-on-region (keys what)
  "Run KEYS on the region GLASSLLM_REGION: (the command they ran . the page it opened).
WHAT names the page while waiting for it."
  (let ((before (buffer-list))
        (region (mapcar #'string-to-number (split-string (getenv "GLASSLLM_REGION"))))
        (command (key-binding (kbd keys))))
    (goto-char (car region))
    (push-mark (cadr region) t t)
    (exchange-point-and-mark)
    (call-interactively command)
    (deactivate-mark)
    (cons command (glassllm-test--wait (lambda () (glassllm-test--page-buffer before)) what))))

(defun glassllm-test--page-entries (ran)
  "What the report says of RAN, the (command . page buffer) that
`glassllm-test--keys-on-region' returns: the command, the page's text, whether a
window shows it."
  (let ((page (cdr ran)))
    (list (cons "key" (symbol-name (car ran)))
          (cons "page" (with-current-buffer page (buffer-substring-no-properties (point-min) (point-max))))
          (cons "page_shown" (and (get-buffer-window page) t)))))

(defun glassllm-test--finish (report)
  "Write REPORT, an alist, to GLASSLLM_OUT as a JSON object, and end Emacs."
  (with-temp-file (getenv "GLASSLLM_OUT")
    (set-buffer-file-coding-system 'utf-8)
    (insert (json-encode report)))
  (kill-emacs 0))

;;; emacs_session_helpers.el ends here
