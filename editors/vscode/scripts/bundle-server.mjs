// Puts the language server into the extension: pip installs glassllm (the repository two
// folders up) and its dependencies into bundled/libs, which the extension puts on the
// PYTHONPATH of `python -P -m glassllm_server`. All of it is pure Python, so one build serves
// every Python 3.11+. $PYTHON names the Python whose pip does the work (default python3).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extension = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repository = resolve(extension, '..', '..');
const libs = join(extension, 'bundled', 'libs');
const python = process.env.PYTHON || 'python3';

// A copy of the project's own files, so that the build leaves nothing in the checkout.
const source = mkdtempSync(join(tmpdir(), 'glassllm-bundle-'));
try {
  for (const name of ['pyproject.toml', 'README.md', 'README.pt-BR.md', 'LICENSE', 'glassllm', 'server']) {
    cpSync(join(repository, name), join(source, name), {
      recursive: true,
      filter: (path) => !path.includes('__pycache__'),
    });
  }
  rmSync(libs, { recursive: true, force: true });
  execFileSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile', '--target', libs, source],
    { stdio: 'inherit' },
  );
} finally {
  rmSync(source, { recursive: true, force: true });
}
// Console scripts point at the build machine's Python; the extension runs `python -m`.
rmSync(join(libs, 'bin'), { recursive: true, force: true });
