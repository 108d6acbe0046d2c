/**
 * What "Choose tokenizer" offers and writes: the `hf:` ids it takes, the models it finds in
 * a real Hugging Face cache folder laid out as `huggingface_hub` lays it out, and the
 * setting's value for a file at each scope.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cachedModels, fileSetting, hfIdProblem, hfSpec, hubCache, tokenizerName } from '../src/tokenizers';

describe('hfSpec', () => {
  it('takes ORG/NAME and NAME, with a revision, and adds hf: when it was left out', () => {
    assert.equal(hfSpec('hf:meta-llama/Meta-Llama-3-8B'), 'hf:meta-llama/Meta-Llama-3-8B');
    assert.equal(hfSpec('mistralai/Mistral-7B-v0.1'), 'hf:mistralai/Mistral-7B-v0.1');
    assert.equal(hfSpec('  hf:gpt2 '), 'hf:gpt2');
    assert.equal(hfSpec('hf:Qwen/Qwen2.5-0.5B@main'), 'hf:Qwen/Qwen2.5-0.5B@main');
    assert.equal(hfSpec('hf:org/name@refs/pr/1'), 'hf:org/name@refs/pr/1');
  });

  it('refuses what the server would refuse', () => {
    for (const typed of ['hf:', '', 'hf:a/b/c', 'hf:org/na me', 'hf:../secrets', 'hf:org/name@', 'hf:org/name@../x', 'hf:/name']) {
      assert.equal(hfSpec(typed), undefined, typed);
    }
  });

  it('says what it expected, in the user\'s language', () => {
    assert.equal(hfIdProblem('hf:meta-llama/Meta-Llama-3-8B', 'en'), undefined);
    assert.match(hfIdProblem('hf:', 'en') ?? '', /^Expected hf:ORG\/NAME or hf:ORG\/NAME@REVISION/);
    assert.match(hfIdProblem('hf:a b', 'pt') ?? '', /^Esperado hf:ORG\/NOME ou hf:ORG\/NOME@REVISÃO/);
  });
});

describe('hubCache', () => {
  const home = '/home/ana';
  it('finds the cache as huggingface_hub does', () => {
    assert.equal(hubCache({}, home), '/home/ana/.cache/huggingface/hub');
    assert.equal(hubCache({ XDG_CACHE_HOME: '/var/cache' }, home), '/var/cache/huggingface/hub');
    assert.equal(hubCache({ HF_HOME: '~/hf', XDG_CACHE_HOME: '/var/cache' }, home), '/home/ana/hf/hub');
    assert.equal(hubCache({ HF_HUB_CACHE: '/models', HF_HOME: '/hf' }, home), '/models');
  });
});

describe('cachedModels', () => {
  const cache = mkdtempSync(join(tmpdir(), 'glassllm-hub-'));
  after(() => rmSync(cache, { recursive: true, force: true }));

  /** A model folder as huggingface_hub leaves it: refs/main, a snapshot of links to blobs. */
  function model(folder: string, files: string[], ref = 'main'): void {
    const commit = 'a'.repeat(40);
    mkdirSync(join(cache, folder, 'refs'), { recursive: true });
    mkdirSync(join(cache, folder, 'blobs'), { recursive: true });
    mkdirSync(join(cache, folder, 'snapshots', commit), { recursive: true });
    writeFileSync(join(cache, folder, 'refs', ref), `${commit}\n`);
    for (const [index, file] of files.entries()) {
      writeFileSync(join(cache, folder, 'blobs', `blob${index}`), '{}');
      symlinkSync(join('..', '..', 'blobs', `blob${index}`), join(cache, folder, 'snapshots', commit, file));
    }
  }

  model('models--meta-llama--Meta-Llama-3-8B', ['config.json', 'tokenizer.json']);
  model('models--mistralai--Mistral-7B-v0.1', ['tokenizer.model']);
  model('models--gpt2', ['tekken.json', 'tokenizer.json']);
  model('models--org--weights-only', ['model.safetensors']);
  model('models--org--other-branch', ['tokenizer.json'], 'dev');
  model('datasets--org--corpus', ['tokenizer.json']);
  mkdirSync(join(cache, 'models--org--empty'));

  it('lists the models whose main snapshot has a tokenizer, with the file the server loads', () => {
    assert.deepEqual(cachedModels(cache), [
      { spec: 'hf:gpt2', file: 'tokenizer.json' },
      { spec: 'hf:meta-llama/Meta-Llama-3-8B', file: 'tokenizer.json' },
      { spec: 'hf:mistralai/Mistral-7B-v0.1', file: 'tokenizer.model' },
    ].map(({ spec, file }) => ({ spec, file: join(cache, `models--${spec.slice(3).replace('/', '--')}`, 'snapshots', 'a'.repeat(40), file) })));
  });

  it('has none in a cache that does not exist', () => {
    assert.deepEqual(cachedModels(join(cache, 'nowhere')), []);
  });
});

describe('fileSetting', () => {
  it('is relative to the workspace root for a file inside it', () => {
    assert.equal(fileSetting('/work/proj/models/llama3/tokenizer.json', '/work/proj'), join('models', 'llama3', 'tokenizer.json'));
  });

  it('is absolute outside the workspace, and for the user settings', () => {
    assert.equal(fileSetting('/home/ana/models/tokenizer.model', '/work/proj'), '/home/ana/models/tokenizer.model');
    assert.equal(fileSetting('/work/project-b/tokenizer.json', '/work/proj'), '/work/project-b/tokenizer.json');
    assert.equal(fileSetting('/work/proj/tokenizer.json', undefined), '/work/proj/tokenizer.json');
  });
});

describe('tokenizerName', () => {
  it('keeps packaged names and hf: ids whole', () => {
    assert.equal(tokenizerName('en'), 'en');
    assert.equal(tokenizerName('hf:meta-llama/Meta-Llama-3-8B'), 'hf:meta-llama/Meta-Llama-3-8B');
  });

  it('names a file by its name, with its folder when every model\'s file has that name', () => {
    assert.equal(tokenizerName('/home/ana/tokenizers/legal.json'), 'legal.json');
    assert.equal(tokenizerName('/home/ana/models/llama3/tokenizer.json'), 'llama3/tokenizer.json');
    assert.equal(tokenizerName('C:\\models\\mistral\\tokenizer.model.v3'), 'mistral/tokenizer.model.v3');
    assert.equal(tokenizerName('/models/nemo/tekken.json'), 'nemo/tekken.json');
    assert.equal(tokenizerName('tokenizer.json'), 'tokenizer.json');
  });
});
