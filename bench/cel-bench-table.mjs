#!/usr/bin/env node
// Merges the --tsv outputs of bench_cel and cel-js-bench.mjs (one or
// more runs each: the median is taken) into one table with the speed-up
// of the dra engine over the fastest JS engine.
// Exit 1 when the engines disagree on matching devices or the C hot path
// allocated. usage: node bench/cel-bench-table.mjs C.tsv JS.tsv
import { readFileSync } from "node:fs";

const GOAL = 20;
const rows = new Map(); // expr id -> { engine -> {ns, compileUs, matches, allocs} }
const notes = new Set();
const runs = new Map(); // "engine\tid" -> results of each run (one per round)
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("#")) notes.add(line);
    if (!line.startsWith("RESULT\t")) continue;
    const [, engine, id, ns, compileUs, matches, dmem, heap] = line.split("\t");
    const k = `${engine}\t${id}`;
    if (!runs.has(k)) runs.set(k, []);
    runs.get(k).push({
      ns: Number(ns), compileUs: Number(compileUs), matches: Number(matches),
      allocs: dmem === undefined ? null : Number(dmem) + Number(heap),
    });
  }
}
// Several runs (rounds alternated between the sides): the median time,
// the matches only when every run agrees, the allocations of all runs.
const median = (xs) => [...xs].sort((x, y) => x - y)[(xs.length - 1) >> 1];
for (const [k, rs] of runs) {
  const [engine, id] = k.split("\t");
  if (!rows.has(id)) rows.set(id, {});
  rows.get(id)[engine] = {
    ns: median(rs.map((r) => r.ns)), compileUs: median(rs.map((r) => r.compileUs)),
    matches: rs.every((r) => r.matches === rs[0].matches) ? rs[0].matches : NaN,
    allocs: rs[0].allocs === null ? null : rs.reduce((a, r) => a + r.allocs, 0),
  };
}
const fmt = (x, w) => String(x).padStart(w);
let bad = false;
console.log(`${"expr".padEnd(5)}${fmt("dra ns", 9)}${fmt("cel-js ns", 11)}${fmt("bufbuild ns", 13)}${fmt("speed-up", 10)}  goal  ${fmt("dra compile us", 15)}  matches  hot-path allocs`);
for (const [id, e] of [...rows].sort()) {
  const c = e.dra, a = e["@marcbachmann/cel-js"], b = e["@bufbuild/cel"];
  const js = [a, b].filter(Boolean);
  const fastest = js.length ? Math.min(...js.map((x) => x.ns)) : NaN;
  const speed = c ? fastest / c.ns : NaN;
  const all = [c, a, b].filter(Boolean);
  const agree = all.every((x) => x.matches === all[0].matches);
  if (!agree || !c || (c.allocs ?? 0) > 0) bad = true;
  console.log(
    `${`(${id})`.padEnd(5)}${fmt(c ? c.ns.toFixed(1) : "-", 9)}${fmt(a ? a.ns.toFixed(0) : "-", 11)}${fmt(b ? b.ns.toFixed(0) : "-", 13)}` +
    `${fmt(Number.isFinite(speed) ? speed.toFixed(1) + "x" : "-", 10)}  ${Number.isFinite(speed) ? (speed >= GOAL ? "met " : "MISS") : " -  "}  ` +
    `${fmt(c ? c.compileUs.toFixed(1) : "-", 15)}  ${agree ? `${fmt(all[0].matches, 4)}/1000` : "DISAGREE"}  ${c ? c.allocs ?? "?" : "-"}`);
}
for (const n of notes) console.log(n);
process.exit(bad ? 1 : 0);
