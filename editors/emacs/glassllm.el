;;; glassllm.el --- See text become tokens, through eglot or lsp-mode  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "29.1") (eglot "1.17"))
;; Keywords: tools, wp
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; glassllm is a transparent, character-level BPE tokenizer; its language server,
;; glassllm-lsp, shows in the editor how a text becomes token IDs.  This package
;; connects Emacs to it in plain text and Markdown buffers, through eglot (built
;; into Emacs 29 and later) or lsp-mode:
;;
;; - hover (eldoc with eglot, `lsp-describe-thing-at-point' or lsp-ui with
;;   lsp-mode): the token at point, its ID, chunk and merges;
;; - diagnostics (flymake or flycheck) on characters outside the alphabet;
;; - inlay hints between chunks and on spaces (eglot; lsp-mode 9+);
;; - colored bands on the tokens (lsp-mode's semantic tokens; eglot 1.23+);
;; - C-c g e / C-c g c: the merge steps, or the tokenizers side by side, for
;;   the region or the token at point, on a page beside the text;
;; - C-c g E / C-c g C: the same pages in a browser, one HTML file to hand over;
;; - the document's token count in the mode line.
;;
;; Install the server (`python3 -m pip install .' in glassllm's checkout), this
;; file (M-x package-install-file), then, in your init file:
;;
;;   (setq glassllm-server-command '("/home/ana/.venvs/glassllm/bin/glassllm-lsp"))
;;   (global-glassllm-mode)
;;
;; For lsp-mode instead of eglot, also (setq glassllm-client 'lsp-mode) before
;; the second line.  Hovers are Markdown: install markdown-mode to see them
;; rendered.

;;; Code:

(require 'seq)
(require 'url-util)

(defgroup glassllm nil
  "See how a tokenizer turns text into token IDs, through a language server."
  :group 'tools
  :prefix "glassllm-")

(defcustom glassllm-client 'eglot
  "The LSP client that talks to the server: eglot or lsp-mode.
Only the chosen client is loaded.  Set it before `global-glassllm-mode' or
`glassllm-mode' is first turned on: the server is registered with the client
then."
  :type '(choice (const :tag "Eglot (built into Emacs 29 and later)" eglot)
                 (const :tag "lsp-mode" lsp-mode)))

(defcustom glassllm-server-command '("glassllm-lsp")
  "How to start the server: a program and its arguments.
The program is looked up in the variable `exec-path'; a virtual
environment that is not on it needs the full path, for example
\(\"/home/ana/.venvs/glassllm/bin/glassllm-lsp\")."
  :type '(repeat string))

(defcustom glassllm-modes '(text-mode markdown-mode gfm-mode)
  "The major modes whose buffers `global-glassllm-mode' serves.
Modes derived from these that are not listed (Org, commit messages, ...) are
not served.  Add `js-json-mode' for chat documents (a conversation counted
through the model's chat template).  With eglot, set this before the mode is
first turned on."
  :type '(repeat symbol))

(defcustom glassllm-settings
  '(:tokenizer "pt"
    :inlayHints (:chunkBoundaries t :spaceMarkers t :tokenBoundaries :json-false))
  "The server's settings (its `glassllm' section), as a property list.
For example (:tokenizer \"en\" :compareWith [\"pt\"] :locale \"pt\").  The keys
are the server's, listed in glassllm's README; false is :json-false.
:tokenizer is \"pt\", \"en\", the file of a glassllm tokenizer or of a real
model's (a Hugging Face tokenizer.json of BPE such as Llama 3's, WordPiece
such as BERT's, WordLevel or Unigram such as T5's; a SentencePiece .model of
BPE such as Mistral's or Unigram such as T5's; a Tekken JSON), or
\"hf:ORG/NAME\", a model in the local Hugging Face cache; :compareWith takes
the same names.
Token budgets: :maxTokens for every document, :budgets by glob (relative to
the project's root, the last match winning), as in
\=(:maxTokens 8000 :budgets [(:files \"prompts/**\" :maxTokens 2000
:severity \"warning\")]); past its budget a document has a diagnostic on its
first token over, and the mode line shows \" 3,900 / 4,096 tokens\".  Without
them, the repository's budgets apply (pyproject.toml's [tool.glassllm] or
.glassllm.toml); these settings win when they give a file a budget."
  :type 'plist)

(defcustom glassllm-count-delay 0.3
  "Seconds of quiet after an edit before the token count is asked again."
  :type 'number)

(defconst glassllm--commands
  '((explain . "glassllm.explainMerges")
    (compare . "glassllm.compareTokenizers"))
  "The server's commands behind `glassllm-explain' and `glassllm-compare'.")

(defconst glassllm--browser-command "glassllm.openInBrowser"
  "The server's command that opens either page in a browser, for sharing.")

(defconst glassllm--token-map-command "glassllm.tokenMap"
  "The server's command that maps the tokens of the workspace's files.")

(defconst glassllm--page-file-regexp "/glassllm/\\(?:explain\\|compare\\)-[^/]*\\.md\\'"
  "Matches the pages the server writes: they are for reading, not for tokenizing.")

;;;; The two clients

(defvar eglot-server-programs)
(defvar eglot-workspace-configuration)
(defvar eglot-current-linepos-function)
(declare-function eglot-current-server "eglot" ())
(declare-function eglot-ensure "eglot" ())
(declare-function eglot-execute "eglot" (server action))
(declare-function eglot-path-to-uri "eglot" (path))
(declare-function jsonrpc-async-request "jsonrpc" (connection method params &rest args))

(defvar lsp-semantic-tokens-enable)
(defvar lsp-inlay-hint-enable)
(declare-function lsp-deferred "ext:lsp-mode" ())
(declare-function lsp-register-client "ext:lsp-mode" (client))
(declare-function lsp-stdio-connection "ext:lsp-mode" (command &optional test-command))
(declare-function make-lsp-client "ext:lsp-mode" (&rest slots))
(declare-function lsp-request-async "ext:lsp-mode" (method params callback &rest args))
(declare-function lsp-workspaces "ext:lsp-mode" ())
(declare-function lsp-text-document-identifier "ext:lsp-mode" ())
(declare-function lsp-inlay-hints-mode "ext:lsp-mode" (&optional arg))

(defvar glassllm--registered nil
  "The client the server was registered with, once it is.")

(defun glassllm--register ()
  "Load `glassllm-client' and register the server with it, once."
  (unless glassllm--registered
    (pcase glassllm-client
      ('eglot (glassllm--register-eglot))
      ('lsp-mode (glassllm--register-lsp-mode))
      (other (user-error "Unknown `glassllm-client' %S: eglot or lsp-mode" other)))
    (setq glassllm--registered glassllm-client)))

(defun glassllm--register-eglot ()
  "Give eglot the server for `glassllm-modes', and the server its settings."
  (require 'eglot)
  ;; Ahead of other entries, so Markdown gets this server instead of marksman: eglot
  ;; gives a buffer one server.  The command is read at start time.
  (add-to-list 'eglot-server-programs
               `(,glassllm-modes . ,(lambda (&optional _interactive) glassllm-server-command)))
  ;; Eglot answers workspace/configuration with the default value of this variable
  ;; (dir-locals aside); the other servers' sections in it stay.
  (let ((configuration (default-value 'eglot-workspace-configuration)))
    (when (listp configuration)
      (set-default 'eglot-workspace-configuration
                   (plist-put (copy-sequence configuration) :glassllm glassllm-settings))))
  ;; Defined once eglot is loaded: its `cl-defgeneric' would drop methods defined before.
  (cl-defmethod eglot-handle-notification
    (server (_method (eql 'glassllm/tokenizersChanged)) &rest _params)
    "Count SERVER's buffers again: its tokenizers changed without an edit."
    (glassllm--recount (lambda () (eq (eglot-current-server) server)))))

(defun glassllm--register-lsp-mode ()
  "Give lsp-mode a client for the buffers where `glassllm-mode' is on."
  (require 'lsp-mode)
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (lambda () glassllm-server-command))
    :activation-fn (lambda (&rest _) (bound-and-true-p glassllm-mode))
    :language-id (lambda (buffer)
                   (if (provided-mode-derived-p (buffer-local-value 'major-mode buffer)
                                                'markdown-mode)
                       "markdown"
                     "plaintext"))
    ;; Beside the buffer's other servers (marksman in Markdown, say).
    :add-on? t
    :server-id 'glassllm
    ;; Read before the first pull of workspace/configuration, which lsp-mode answers
    ;; with an empty section.
    :initialization-options (lambda () (list :glassllm glassllm-settings))
    ;; lsp-mode counts columns in characters (code points) without saying so; the
    ;; server counts what the client asks for, and UTF-16 units when it asks nothing.
    :custom-capabilities '((general . ((positionEncodings . ["utf-32"]))))
    ;; lsp-mode does not open documents for servers (window/showDocument), so the
    ;; server also sends the page as a message: the page buffer shows it instead.
    :notification-handlers (let ((handlers (make-hash-table :test #'equal)))
                             (puthash "window/showMessage" #'glassllm--lsp-show-message handlers)
                             (puthash "glassllm/tokenizersChanged" #'glassllm--lsp-tokenizers-changed
                                      handlers)
                             handlers))))

(defun glassllm--lsp-tokenizers-changed (workspace _params)
  "Count the buffers of WORKSPACE again: its tokenizers changed without an edit."
  (glassllm--recount (lambda () (memq workspace (lsp-workspaces)))))

(defvar glassllm--page-pending nil
  "Non-nil while a command's page is on its way (its text comes as a message too).")

(defun glassllm--lsp-show-message (_workspace params)
  "Show the server's message in PARAMS, unless it is a page about to be shown."
  (let ((text (glassllm--field params :message)))
    (unless (and glassllm--page-pending (string-prefix-p "# " text))
      (message "glassllm: %s" text))))

(defun glassllm--start ()
  "Start the chosen client in this buffer."
  (pcase glassllm--registered
    ('eglot (eglot-ensure))
    ('lsp-mode
     ;; lsp-mode reads these when it sets the buffer up: the pieces get colored bands,
     ;; and inlay hints where lsp-mode has them (9.0 and later).
     (setq-local lsp-semantic-tokens-enable t)
     (setq-local lsp-inlay-hint-enable t)
     (add-hook 'lsp-after-open-hook #'glassllm--after-lsp-open nil t)
     (lsp-deferred))))

(defun glassllm--after-lsp-open ()
  "Turn on what lsp-mode has beyond lsp-mode 8, and count the tokens."
  (when (fboundp 'lsp-inlay-hints-mode)
    (lsp-inlay-hints-mode 1))
  (glassllm--schedule-count))

(defun glassllm--connected-p ()
  "Whether the chosen client serves this buffer."
  (pcase glassllm--registered
    ('eglot (and (eglot-current-server) t))
    ('lsp-mode (and (bound-and-true-p lsp-mode) (lsp-workspaces) t))))

(defun glassllm--request (method params on-success)
  "Send METHOD with PARAMS to this buffer's server.
ON-SUCCESS gets the result; failures are shown as messages."
  (let ((on-error (lambda (error)
                    (setq glassllm--page-pending nil)
                    (message "glassllm: %s" (or (glassllm--field error :message) error)))))
    (pcase glassllm--registered
      ('eglot
       ;; Deferred: sent once eglot has told the server about the latest edits.
       (jsonrpc-async-request (eglot-current-server) method params
                              :success-fn on-success :error-fn on-error
                              :deferred method))
      ('lsp-mode
       (lsp-request-async (substring (symbol-name method) 1) params on-success
                          :mode 'alive :error-handler on-error)))))

(defun glassllm--field (object key)
  "The field KEY (a keyword) of a JSON OBJECT from either client.
Eglot reads JSON objects as property lists, lsp-mode (unless
`lsp-use-plists') as hash tables."
  (if (hash-table-p object)
      (gethash (substring (symbol-name key) 1) object)
    (plist-get object key)))

;;;; Positions

(defun glassllm--lsp-position (pos)
  "The LSP position of POS, in the encoding the client and the server agreed on."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      ;; LSP lines count from 0, Emacs lines from 1.
      (list :line (1- (line-number-at-pos pos t))
            :character (if (eq glassllm--registered 'eglot)
                           (funcall eglot-current-linepos-function)
                         ;; The UTF-32 that the lsp-mode client asks for.
                         (- (point) (line-beginning-position)))))))

(defun glassllm--uri ()
  "The URI of this buffer's file, as the client sends it."
  (if (eq glassllm--registered 'eglot)
      (eglot-path-to-uri (buffer-file-name))
    (plist-get (lsp-text-document-identifier) :uri)))

;;;; Commands

(defun glassllm--region ()
  "The region, or point twice."
  (if (use-region-p)
      (list (region-beginning) (region-end))
    (list (point) (point))))

(defun glassllm--run (kind beg end &optional browser)
  "Run the server's KIND command on the region from BEG to END.
KIND is explain or compare, as in `glassllm--commands'.  With BROWSER non-nil,
open that page in a browser instead, as the HTML page of `glassllm --html'."
  (unless (glassllm--connected-p)
    (user-error "No glassllm server in this buffer (see `glassllm-mode')"))
  (let ((command (if browser glassllm--browser-command (alist-get kind glassllm--commands)))
        (arguments (vconcat (vector (glassllm--uri)
                                    (list :start (glassllm--lsp-position beg)
                                          :end (glassllm--lsp-position end)))
                            (and browser (vector (symbol-name kind))))))
    ;; The command itself, not the code action menu: the server offers several actions
    ;; with the same kind, and a key should not ask which one.
    (cond
     ((eq glassllm--registered 'eglot)
      ;; The server opens the page itself (window/showDocument; in a browser, eglot
      ;; hands it to `browse-url').
      (eglot-execute (eglot-current-server) `(:command ,command :arguments ,arguments)))
     (browser
      (glassllm--request :workspace/executeCommand
                         `(:command ,command :arguments ,arguments)
                         #'glassllm--browse-page))
     (t
      (setq glassllm--page-pending t)
      (glassllm--request :workspace/executeCommand
                         `(:command ,command :arguments ,arguments)
                         #'glassllm--show-page)))))

(defun glassllm--browse-page (result)
  "Open the HTML page of a browser command's RESULT with `browse-url-of-file'.
lsp-mode does not open documents for servers, so the page is opened here."
  (let ((path (glassllm--field result :path)))
    (when (stringp path)
      (browse-url-of-file path))))

(defun glassllm--show-page (result)
  "Show the page of a command's RESULT beside the text."
  (setq glassllm--page-pending nil)
  (let* ((uri (glassllm--field result :page))
         (file (and (stringp uri) (string-prefix-p "file://" uri)
                    (url-unhex-string (substring uri (length "file://")))))
         (buffer (if file
                     (find-file-noselect file)
                   (with-current-buffer (get-buffer-create "*glassllm page*")
                     (let ((inhibit-read-only t))
                       (erase-buffer)
                       (insert (glassllm--field result :markdown)))
                     (when (fboundp 'markdown-mode)
                       (funcall 'markdown-mode))
                     (current-buffer)))))
    (pop-to-buffer buffer)))

;;;###autoload
(defun glassllm-explain (beg end)
  "Explain the BPE merges of the region from BEG to END, or of the token at point."
  (interactive (glassllm--region))
  (glassllm--run 'explain beg end))

;;;###autoload
(defun glassllm-compare (beg end)
  "Compare the tokenizers on the region from BEG to END, or on the token at point."
  (interactive (glassllm--region))
  (glassllm--run 'compare beg end))

;;;###autoload
(defun glassllm-explain-in-browser (beg end)
  "Open the merge explanation of the region from BEG to END in a browser.
Without a region, of the token at point.  The page is one self-contained HTML
file in glassllm's cache folder, to hand over."
  (interactive (glassllm--region))
  (glassllm--run 'explain beg end t))

;;;###autoload
(defun glassllm-compare-in-browser (beg end)
  "Open the tokenizer comparison of the region from BEG to END in a browser.
Without a region, of the token at point.  The page is one self-contained HTML
file in glassllm's cache folder, to hand over."
  (interactive (glassllm--region))
  (glassllm--run 'compare beg end t))

;;;###autoload
(defun glassllm-token-map ()
  "Map the tokens of the workspace's files on a page opened in a browser.
The server counts every text file of the workspace folders with the tokenizer
in use, skipping what .gitignore skips, binaries and files over 10 MB (the page
lists those), and writes one self-contained HTML page to glassllm's cache
folder: the folder tree sized by tokens, each file's count, share and budget."
  (interactive)
  (unless (glassllm--connected-p)
    (user-error "No glassllm server in this buffer (see `glassllm-mode')"))
  (let ((command `(:command ,glassllm--token-map-command :arguments [])))
    (if (eq glassllm--registered 'eglot)
        ;; The server opens the page itself (window/showDocument, external).
        (eglot-execute (eglot-current-server) command)
      (glassllm--request :workspace/executeCommand command #'glassllm--browse-page))))

;;;; The token count in the mode line

(defvar glassllm-mode)

(defvar-local glassllm--count nil
  "The buffer's latest `glassllm/stats' answer.")

(defvar-local glassllm--count-timer nil
  "The timer that asks for the count after the latest edit.")

(defun glassllm--mode-line ()
  "Return the token count for the mode line, or an empty string.
It reads \" 1,234 tokens\", or \" 3,900 / 4,096 tokens\" when a token budget
applies (counted with its tokenizer; a dataset's largest line).  A chat
document's is its prompts', the template's share beside it (the budget's
unit's when a budget applies): \" 3,900 / 4,096 tokens (87 from the
template)\".  Empty before the server's first answer."
  (let* ((tokens (glassllm--field glassllm--count :tokens))
         (budget (glassllm--field glassllm--count :budget))
         (chat (glassllm--field glassllm--count :chat))
         (template (and chat (if budget (glassllm--field budget :templateTokens)
                               (glassllm--field chat :templateCount))))
         (count (cond ((and budget (glassllm--field budget :maxTokens))
                       (format " %s / %s tokens"
                               (glassllm--grouped (glassllm--field budget :tokens))
                               (glassllm--grouped (glassllm--field budget :maxTokens))))
                      (tokens (format " %s %s" (glassllm--grouped tokens) (if (= tokens 1) "token" "tokens"))))))
    (if (not count)
        ""
      (concat count
              (when template
                (format (if (glassllm--portuguese-p) " (%s do modelo de chat)" " (%s from the template)")
                        (glassllm--grouped template)))))))

(defun glassllm--grouped (number)
  "NUMBER with its thousands grouped as the server's language writes them."
  (let ((text (number-to-string number))
        (separator (if (glassllm--portuguese-p) "." ",")))
    (while (string-match "\\([0-9]\\)\\([0-9]\\{3\\}\\)\\(?:[.,]\\|\\'\\)" text)
      (setq text (replace-match (concat "\\1" separator "\\2") t nil text)))
    text))

(defun glassllm--portuguese-p ()
  "Whether the server speaks Portuguese.
As the server decides: its locale setting, or else the environment."
  (let ((chosen (or (plist-get glassllm-settings :locale)
                    (seq-find (lambda (value) (and value (not (equal value ""))))
                              (mapcar #'getenv '("LC_ALL" "LC_MESSAGES" "LANG"))))))
    (and (stringp chosen) (string-prefix-p "pt" (downcase chosen)))))

(defun glassllm--schedule-count (&rest _)
  "Ask for the token count once edits have paused for `glassllm-count-delay'."
  (when (timerp glassllm--count-timer)
    (cancel-timer glassllm--count-timer))
  (setq glassllm--count-timer
        (run-with-timer glassllm-count-delay nil #'glassllm--ask-count (current-buffer))))

(defun glassllm--ask-count (buffer)
  "Ask the server for BUFFER's token count, for the mode line."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (and glassllm-mode (glassllm--connected-p))
        (glassllm--request :glassllm/stats
                           `(:textDocument (:uri ,(glassllm--uri)))
                           (lambda (result)
                             (when (buffer-live-p buffer)
                               (with-current-buffer buffer
                                 (setq glassllm--count result)
                                 (force-mode-line-update)))))))))

(defun glassllm--recount (served-p)
  "Ask again for the count of each `glassllm-mode' buffer that SERVED-P accepts.
SERVED-P is called in each buffer.  The server sends glassllm/tokenizersChanged
when its counts changed without an edit: a tokenizer file that loaded after the
settings named it (a large one takes seconds), a compared one that became ready."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (and glassllm-mode (funcall served-p))
        (glassllm--schedule-count)))))

;;;; The modes

(defvar glassllm-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "e" #'glassllm-explain)
    (define-key map "c" #'glassllm-compare)
    (define-key map "E" #'glassllm-explain-in-browser)
    (define-key map "C" #'glassllm-compare-in-browser)
    map)
  "The commands of `glassllm-mode', under `glassllm-keymap-prefix'.")
(fset 'glassllm-command-map glassllm-command-map)

(defvar glassllm-mode-map (make-sparse-keymap)
  "Keys of `glassllm-mode': `glassllm-command-map' under `glassllm-keymap-prefix'.")

(defun glassllm--set-prefix (symbol prefix)
  "Set SYMBOL to PREFIX and bind `glassllm-command-map' under it instead."
  (when (and (boundp symbol) (symbol-value symbol))
    (define-key glassllm-mode-map (kbd (symbol-value symbol)) nil t))
  (set-default symbol prefix)
  (when prefix
    (define-key glassllm-mode-map (kbd prefix) 'glassllm-command-map)))

(defcustom glassllm-keymap-prefix "C-c g"
  "The keys before those of `glassllm-command-map' in `glassllm-mode'.
By default \\<glassllm-mode-map>\\[glassllm-explain] explains and
\\[glassllm-compare] compares.  Keys of the form Control-c and a letter are the
user's by Emacs' conventions, so this is an option: nil binds none, and
`glassllm-command-map' can then go under any key you choose."
  :type '(choice (key-sequence :tag "Prefix") (const :tag "None" nil))
  :set #'glassllm--set-prefix)

;;;###autoload
(define-minor-mode glassllm-mode
  "See how this buffer's text becomes tokens, through glassllm's server.
Starts `glassllm-client' (eglot or lsp-mode) with the server, shows the token
count in the mode line, and binds:

\\{glassllm-mode-map}"
  :lighter (:eval (glassllm--mode-line))
  :keymap glassllm-mode-map
  (if glassllm-mode
      (progn
        (glassllm--register)
        (add-hook 'after-change-functions #'glassllm--schedule-count nil t)
        (add-hook 'eglot-managed-mode-hook #'glassllm--schedule-count nil t)
        (glassllm--start))
    (remove-hook 'after-change-functions #'glassllm--schedule-count t)
    (remove-hook 'eglot-managed-mode-hook #'glassllm--schedule-count t)
    (when (timerp glassllm--count-timer)
      (cancel-timer glassllm--count-timer))
    (setq glassllm--count nil)))

(defun glassllm--turn-on ()
  "Turn `glassllm-mode' on in a buffer visiting a file of one of `glassllm-modes'."
  (when (and (memq major-mode glassllm-modes)
             buffer-file-name
             (not (string-match-p glassllm--page-file-regexp buffer-file-name)))
    (glassllm-mode 1)))

;;;###autoload
(define-globalized-minor-mode global-glassllm-mode glassllm-mode glassllm--turn-on
  :group 'glassllm)

(provide 'glassllm)
;;; glassllm.el ends here
