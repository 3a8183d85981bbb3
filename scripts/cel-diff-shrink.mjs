// Text-level shrinking of a disagreeing CEL expression for readable bug
// reports: candidates replace a bracketed span by a constant or by one
// operand of its top-level binary operator. A candidate is kept when the
// oracle and dra still disagree in the same way (same outcome pair); the
// C engine's checker rejects ill-typed candidates on its own (outcome C),
// so no type model is needed here.

const OPS = [" && ", " || ", " == ", " != ", " <= ", " >= ", " < ", " > ", " + ", " - ", " * ", " / ", " % ", " in ", " ? ", " : "];
const CONSTS = ["true", "false", "0", "1", "''", "[]"];

// [start, end] index pairs of balanced () and [] outside string literals.
function spans(s) {
  const out = [];
  const stack = [];
  let q = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (q) {
      if (c === "\\") i++;
      else if (c === q) q = null;
      continue;
    }
    if (c === "'" || c === '"') q = c;
    else if (c === "(" || c === "[") stack.push(i);
    else if ((c === ")" || c === "]") && stack.length) out.push([stack.pop(), i]);
  }
  return out;
}

// Operands of |s| split at top-level occurrences of a binary operator.
function operands(s) {
  const res = [];
  let depth = 0;
  let q = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (q) {
      if (c === "\\") i++;
      else if (c === q) q = null;
      continue;
    }
    if (c === "'" || c === '"') q = c;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (depth === 0 && c === " ") {
      for (const op of OPS) {
        if (s.startsWith(op, i)) {
          res.push(s.slice(0, i).trim(), s.slice(i + op.length).trim());
          break;
        }
      }
    }
  }
  return res.filter((x) => x.length > 0);
}

export function candidates(expr) {
  const out = new Set(operands(expr));
  for (const [a, b] of spans(expr)) {
    const pre = expr.slice(0, a), post = expr.slice(b + 1);
    const inner = expr.slice(a + 1, b);
    if (expr[a] === "(" && /[\w]$/.test(pre)) {
      continue; // call arguments: shrunk through their own inner spans
    } else if (expr[a] === "(") {
      for (const k of CONSTS) out.add(pre + k + post);
      for (const o of operands(inner)) out.add(pre + "(" + o + ")" + post);
      out.add(pre + inner + post);
    } else {
      out.add(pre + "[]" + post);
    }
  }
  out.delete(expr);
  return [...out].filter((c) => c.length < expr.length).sort((x, y) => x.length - y.length);
}

// Shrinks each failure {expr, device, want, got}. |oracle(expr, dev)| gives
// the oracle outcome letter; |runDra(cases)| gives dra outcome letters for
// [{expr, device}] in one driver run. Returns the minimal expressions.
export function shrink(failures, oracle, runDra, { rounds = 12, perCase = 150 } = {}) {
  const cur = failures.map((f) => ({ ...f }));
  for (let r = 0; r < rounds; r++) {
    const batch = [];
    cur.forEach((f, fi) => {
      for (const expr of candidates(f.expr).slice(0, perCase)) {
        if (oracle(expr, f.device) === f.want) batch.push({ fi, expr, device: f.device });
      }
    });
    if (batch.length === 0) break;
    const got = runDra(batch);
    let improved = false;
    batch.forEach((b, i) => {
      const f = cur[b.fi];
      if (got[i] === f.got && b.expr.length < f.expr.length) {
        f.expr = b.expr;
        improved = true;
      }
    });
    if (!improved) break;
  }
  return cur.map((f) => f.expr);
}
