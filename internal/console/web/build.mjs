// Builds the console into ../dist and records in ../assets.sum the hashes of what it was built from and of what
// it wrote, which TestAssetsAreCurrent (console_test.go) compares with the tree. Run by `make console`.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = dirname(fileURLToPath(import.meta.url));
const pkg = dirname(web); // internal/console
const out = join(pkg, 'dist');

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const sha256 = (p) => createHash('sha256').update(readFileSync(p)).digest('hex');
const rel = (p) => relative(pkg, p).split('\\').join('/');

rmSync(out, { recursive: true, force: true });
mkdirSync(out);
await esbuild.build({
  entryPoints: [join(web, 'src/main.js'), join(web, 'src/style.css')],
  outdir: out,
  entryNames: 'app',
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  legalComments: 'eof',
  logLevel: 'warning',
});
copyFileSync(join(web, 'src/index.html'), join(out, 'index.html'));

const sources = [join(web, 'build.mjs'), join(web, 'package.json'), join(web, 'package-lock.json'), ...files(join(web, 'src'))];
const lines = [
  '# Written by `make console` (internal/console/web/build.mjs); TestAssetsAreCurrent compares it with the tree.',
  ...sources.map(rel).sort().map((p) => `source ${sha256(join(pkg, p))} ${p}`),
  ...files(out).map(rel).sort().map((p) => `dist ${sha256(join(pkg, p))} ${p}`),
];
writeFileSync(join(pkg, 'assets.sum'), lines.join('\n') + '\n');
for (const p of files(out).sort()) console.log(`${rel(p)}\t${statSync(p).size} bytes`);
