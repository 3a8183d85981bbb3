#!/usr/bin/env node
// The JavaScript half of the CEL selector benchmark: the same four DRA
// selector expressions and the same 1,000 generated devices as
// bench/bench_cel.c, evaluated with @bufbuild/cel and @marcbachmann/cel-js.
// Each expression is compiled once, warmed up, then evaluated --evals times
// (default 1,000,000) cycling over the devices; the median CPU ns/eval of
// --rounds timed runs is printed per engine, plus how many of the 1,000
// devices matched, which bench/run-cel-bench.sh checks against the C engine.
//
// usage: node bench/cel-js-bench.mjs [--prefix DIR] [--evals N] [--rounds N]
//                                    [--only a,b,...] [--tsv]
// Packages are installed (npm install --no-save) under --prefix, default
// $CEL_JS_PREFIX or /tmp/dra-cel-js. Exit 77 when they cannot be installed.
import { ensurePackages, importPackage, defaultPrefix, SKIP } from "../scripts/cel-diff-npm.mjs";

// ---- the workload (keep in sync with bench/bench_cel.c) -------------------

export const EXPRESSIONS = [
  { id: "a", text: "device.driver == 'gpu.nvidia.com'" },
  { id: "b", text: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'" },
  { id: "c", text: "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0" },
  { id: "d", text: "['a100', 'h100', 'gb200'].exists(p, device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains(p))" },
  // A fifth, beyond the four the task names: a regex on the hot path.
  { id: "e", text: "device.attributes['resource.kubernetes.io'].pciBusID.matches('^0000:[0-3][0-9a-f]:')" },
];

const PRODUCTS = [
  ["NVIDIA A100-SXM4-40GB", "Ampere", 40],
  ["NVIDIA A100-SXM4-80GB", "Ampere", 80],
  ["NVIDIA H100 80GB HBM3", "Hopper", 80],
  ["NVIDIA H200 141GB HBM3e", "Hopper", 141],
  ["NVIDIA GB200 186GB HBM3e", "Blackwell", 186],
  ["NVIDIA L4", "Ada Lovelace", 24],
  ["Tesla T4", "Turing", 16],
];
export const NDEVICES = 1000;

// Device |i| of the benchmark set. Every tenth device comes from another
// driver that publishes the same fully qualified gpu.nvidia.com attributes,
// so expression (a) varies while (c) and (d) never hit a missing key. Every
// fourth device is a MIG slice with an eighth of the memory.
export function benchDevice(i) {
  const [product, arch, gi] = PRODUCTS[i % PRODUCTS.length];
  const mig = i % 4 === 3;
  const hex = (n, w) => n.toString(16).padStart(w, "0");
  return {
    driver: i % 10 === 9 ? "gpu.example.com" : "gpu.nvidia.com",
    attributes: {
      "gpu.nvidia.com": {
        type: mig ? "mig" : "gpu",
        productName: product,
        architecture: arch,
        uuid: `GPU-${hex(i, 8)}-4e1d-9c2f-${hex(i * 7919, 12)}`,
        index: BigInt(i % 8),
      },
      "resource.kubernetes.io": { pciBusID: `0000:${hex(i % 256, 2)}:00.0` },
    },
    capacity: { "gpu.nvidia.com": { memory: mig ? `${gi * 128}Mi` : `${gi}Gi` } },
  };
}

// ---- resource.Quantity, as far as the JS engines need it -------------------
// Neither JS engine has Kubernetes' quantity library. This parses the
// Kubernetes quantity grammar (sign, digits, fraction, binary/decimal SI
// suffix or e-exponent) into an exact BigInt count of nano-units, which
// orders like Kubernetes' Quantity.Cmp for every value with at most nine
// fractional digits (all of the benchmark's values are whole bytes).
const BIN = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const DEC = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
export function parseQuantity(s) {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) throw new Error(`quantities must match the regular expression: ${s}`);
  const frac = m[3] ?? "";
  let units = BigInt((m[2] || "0") + frac); // value * 10^frac.length
  let exp10 = -frac.length + 9; // to nano-units
  const suf = m[4] ?? "";
  if (suf in BIN) units <<= BIN[suf];
  else if (suf in DEC) exp10 += DEC[suf];
  else exp10 += Number(suf.slice(1));
  if (exp10 >= 0) units *= 10n ** BigInt(exp10);
  else units = (units + 10n ** BigInt(-exp10) - 1n) / 10n ** BigInt(-exp10); // round up, as k8s does
  return m[1] === "-" ? -units : units;
}
const cmp = (a, b) => (a < b ? -1n : a > b ? 1n : 0n);
// quantity() as the JS engines see it: memoised per string, so the JS side
// pays a map lookup instead of a parse per evaluation, which is what an
// engine that folds the constant quantity('40Gi') at compile time pays.
// This favours the JS engines; it is the closest equivalent to folding.
const quantityMemo = new Map();
function quantityOf(s) {
  let q = quantityMemo.get(s);
  if (q === undefined) quantityMemo.set(s, (q = parseQuantity(s)));
  return q;
}

// ---- engines ---------------------------------------------------------------
// Each adapter returns { note, compile(text) -> fn(input) -> value|throws,
// input(device) -> the engine's fastest input form (built once) }.

async function bufbuildEngine(prefix) {
  const cel = await importPackage(prefix, "@bufbuild/cel");
  const { strings } = await importPackage(prefix, "@bufbuild/cel", "./ext");
  const { CelScalar: S } = cel;
  // No opaque types without protobuf descriptors: Quantity is emulated as
  // an int of nano-units, with quantity(string) and int.compareTo(int).
  const funcs = [
    ...strings,
    cel.celFunc("quantity", [S.STRING], S.INT, (s) => quantityOf(s)),
    cel.celMethod("compareTo", S.INT, [S.INT], S.INT, function (o) { return cmp(this, o); }),
  ];
  const env = cel.celEnv({ funcs });
  const toMap = (o) => cel.celMap(new Map(Object.entries(o).map(([k, v]) =>
    [k, v !== null && typeof v === "object" ? toMap(v) : v])));
  return {
    name: "@bufbuild/cel",
    note: "quantity emulated as int nano-units (no opaque types), quantity() memoised; input pre-wrapped with celMap",
    compile(text) {
      const run = cel.plan(env, cel.parse(text));
      return (input) => {
        const r = run(input);
        if (cel.isCelError(r)) throw r;
        return r;
      };
    },
    input(dev) {
      const d = structuredClone(dev);
      d.capacity["gpu.nvidia.com"].memory = parseQuantity(d.capacity["gpu.nvidia.com"].memory);
      return { device: toMap(d) };
    },
  };
}

async function celjsEngine(prefix) {
  const { Environment } = await importPackage(prefix, "@marcbachmann/cel-js");
  class Quantity {
    constructor(nano) { this.nano = nano; }
  }
  const env = new Environment()
    .registerType("Quantity", Quantity)
    .registerVariable("device", "map")
    .registerFunction("quantity(string): Quantity", (s) => new Quantity(quantityOf(s)))
    .registerFunction("Quantity.compareTo(Quantity): int", (a, b) => cmp(a.nano, b.nano));
  return {
    name: "@marcbachmann/cel-js",
    note: "quantity registered as an opaque Quantity type with quantity() (memoised) and compareTo()",
    compile(text) {
      return env.parse(text);
    },
    input(dev) {
      const d = structuredClone(dev);
      d.capacity["gpu.nvidia.com"].memory = new Quantity(parseQuantity(d.capacity["gpu.nvidia.com"].memory));
      return { device: d };
    },
  };
}

// ---- measurement -------------------------------------------------------------

// CPU time of the whole process in ns (user + system, all threads: the
// JIT and GC threads work for the engine too). Used instead of the wall
// clock because the benchmark runs on shared 2-core machines; the C side
// measures process CPU time the same way.
function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}

function measure(engine, expr, evals, rounds) {
  const t0 = cpuNs();
  const fn = engine.compile(expr.text);
  const compileUs = (cpuNs() - t0) / 1e3;
  const inputs = [];
  for (let i = 0; i < NDEVICES; i++) inputs.push(engine.input(benchDevice(i)));
  let matches = 0;
  for (let i = 0; i < NDEVICES; i++) if (fn(inputs[i]) === true) matches++;
  let sink = 0;
  const warm = Math.min(evals, 200_000);
  for (let i = 0; i < warm; i++) if (fn(inputs[i % NDEVICES]) === true) sink++;
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const s = cpuNs();
    for (let i = 0; i < evals; i++) if (fn(inputs[i % NDEVICES]) === true) sink++;
    times.push((cpuNs() - s) / evals);
  }
  times.sort((x, y) => x - y);
  if (sink < 0) console.log(sink); // keeps the loop observable
  return { ns: times[times.length >> 1], compileUs, matches };
}

function parseArgs(argv) {
  const o = { prefix: defaultPrefix(), evals: 1_000_000, rounds: 3, only: null, tsv: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--prefix") o.prefix = argv[++i];
    else if (a === "--evals") o.evals = Number(argv[++i]);
    else if (a === "--rounds") o.rounds = Number(argv[++i]);
    else if (a === "--only") o.only = argv[++i].split(",");
    else if (a === "--tsv") o.tsv = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!(o.evals > 0) || !(o.rounds > 0)) throw new Error("--evals and --rounds must be positive");
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const why = ensurePackages(o.prefix, ["@bufbuild/cel", "@marcbachmann/cel-js"]);
  if (why) {
    console.error(`cel-js-bench: skipped: ${why}`);
    process.exit(SKIP);
  }
  const engines = [await celjsEngine(o.prefix), await bufbuildEngine(o.prefix)];
  for (const e of engines) console.log(`# ${e.name}: ${e.note}`);
  for (const expr of EXPRESSIONS) {
    if (o.only && !o.only.includes(expr.id)) continue;
    console.log(`# (${expr.id}) ${expr.text}`);
    for (const e of engines) {
      const r = measure(e, expr, o.evals, o.rounds);
      if (o.tsv) console.log(["RESULT", e.name, expr.id, r.ns.toFixed(1), r.compileUs.toFixed(1), r.matches].join("\t"));
      else console.log(`  ${e.name.padEnd(22)} ${r.ns.toFixed(1).padStart(9)} ns/eval  compile ${r.compileUs.toFixed(0).padStart(6)} us  matches ${r.matches}/${NDEVICES}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(`cel-js-bench: ${e.stack ?? e}`);
    process.exit(1);
  });
}
