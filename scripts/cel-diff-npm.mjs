// Loads the JavaScript CEL engines used as oracles (differential test) and
// as baselines (bench/cel-js-bench.mjs). The packages are installed at run
// time into a build directory with `npm install --no-save`, never into the
// source tree, and imported from there by file URL (node cannot resolve a
// bare specifier against an arbitrary directory).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// Pinned so results and timings are comparable from run to run.
export const PACKAGES = {
  "@bufbuild/cel": "0.6.1",
  "@marcbachmann/cel-js": "8.0.0",
};

// Exit status that CTest treats as "skipped" (SKIP_RETURN_CODE).
export const SKIP = 77;

function installed(prefix, name, version) {
  const pj = join(prefix, "node_modules", name, "package.json");
  if (!existsSync(pj)) return false;
  try {
    return JSON.parse(readFileSync(pj, "utf8")).version === version;
  } catch {
    return false;
  }
}

// Makes sure every package in |names| is present under |prefix|. Returns
// null on success, else a one-line reason (registry unreachable, ...).
export function ensurePackages(prefix, names) {
  const missing = names.filter((n) => !installed(prefix, n, PACKAGES[n]));
  if (missing.length === 0) return null;
  mkdirSync(prefix, { recursive: true });
  const pj = join(prefix, "package.json");
  if (!existsSync(pj))
    writeFileSync(pj, JSON.stringify({ name: "dra-cel-oracles", private: true }) + "\n");
  const specs = names.map((n) => `${n}@${PACKAGES[n]}`);
  const r = spawnSync(
    "npm",
    ["install", "--no-save", "--no-audit", "--no-fund", "--no-package-lock",
     "--prefix", prefix, ...specs],
    { encoding: "utf8", timeout: 240_000 },
  );
  if (r.error) return `npm could not run: ${r.error.message}`;
  if (r.status !== 0) {
    const tail = `${r.stdout}\n${r.stderr}`.trim().split("\n").slice(-3).join(" | ");
    return `npm install failed (status ${r.status}): ${tail}`;
  }
  const still = names.filter((n) => !installed(prefix, n, PACKAGES[n]));
  return still.length ? `npm did not install ${still.join(", ")}` : null;
}

// Imports the ESM entry point |subpath| ("." or "./ext") of package |name|
// installed under |prefix|, following its package.json "exports".
export async function importPackage(prefix, name, subpath = ".") {
  const dir = join(prefix, "node_modules", name);
  const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let entry = pj.exports?.[subpath];
  if (entry && typeof entry === "object") entry = entry.import ?? entry.default;
  if (typeof entry !== "string")
    entry = subpath === "." ? pj.module ?? pj.main ?? "index.js" : subpath;
  return import(pathToFileURL(join(dir, entry)).href);
}

// The default install prefix: $CEL_JS_PREFIX, else <build dir>/cel-js, else
// a directory under the system temp dir.
export function defaultPrefix() {
  if (process.env.CEL_JS_PREFIX) return process.env.CEL_JS_PREFIX;
  if (process.env.DRA_BUILD_DIR) return join(process.env.DRA_BUILD_DIR, "cel-js");
  return join(process.env.TMPDIR ?? "/tmp", "dra-cel-js");
}
