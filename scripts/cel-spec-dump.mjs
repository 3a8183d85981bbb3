// Dumps the cel-spec conformance suite shipped (as protobuf-JSON inside
// JavaScript) by the npm package @bufbuild/cel-spec into one JSON file per
// suite file: {"name": "basic", "sections": [{"name": ..., "tests": [SimpleTest...]}]}.
// The package is installed at run time into OUTDIR/npm with
// `npm install --no-save`; nothing is written into the source tree.
// Usage: node scripts/cel-spec-dump.mjs OUTDIR
// Exit 77 (CTest "skipped") when the package cannot be installed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const VERSION = "0.6.1";
const out = resolve(process.argv[2] ?? "cel-spec");
const prefix = join(out, "npm");
const pkg = join(prefix, "node_modules", "@bufbuild", "cel-spec");
mkdirSync(prefix, { recursive: true });
if (!existsSync(join(pkg, "package.json"))) {
  const r = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund",
    "--prefix", prefix, `@bufbuild/cel-spec@${VERSION}`], { stdio: "inherit" });
  if (r.status !== 0 || !existsSync(join(pkg, "package.json"))) {
    console.error("cel-spec-dump: cannot install @bufbuild/cel-spec; skipping");
    process.exit(77);
  }
}
const require = createRequire(import.meta.url);
const { tests } = require(join(pkg, "dist", "cjs", "testdata", "conformance.js"));
let files = 0, cases = 0;
for (const file of tests.suites) {
  const sections = [];
  for (const sec of file.suites ?? []) {
    const list = (sec.tests ?? []).map((t) => t.original);
    cases += list.length;
    sections.push({ name: sec.name, tests: list });
  }
  writeFileSync(join(out, `${file.name}.json`), JSON.stringify({ name: file.name, sections }));
  files++;
}
console.log(`cel-spec-dump: ${files} files, ${cases} cases in ${out}`);
