// Known, reasoned differences between @bufbuild/cel (the oracle) and
// cel-go (what Kubernetes runs, and what the dra engine follows). Each is
// documented in docs/cel-differential.md.
//
// Two mechanisms:
//  - oracleCorrections(cel): functions that replace the oracle's own where
//    it departs from cel-go in a way that can be fixed exactly (the oracle
//    then computes cel-go's answer, and nothing needs forgiving);
//  - KNOWN_DIFFERENCES: matchers for disagreements that cannot be fixed in
//    the oracle; a disagreeing case is forgiven only when one accepts it.
//    match(c, got): c = {expr, device, want, wantMsg} (oracle outcome
//    T/F/E), got = {kind, msg} (dra outcome T/F/E/C/X).

const MIN_INT = -9223372036854775808n;
const MAX_INT = 9223372036854775807n;

export function oracleCorrections(cel) {
  const { INT, STRING } = cel.CelScalar;
  const fail = (msg) => {
    throw cel.celError(msg);
  };
  return [
    // cel-go: INT64_MIN % -1 overflows (an error); the oracle returns 0.
    cel.celFunc("_%_", [INT, INT], INT, (l, r) => {
      if (r === 0n) fail("modulus by zero");
      if (l === MIN_INT && r === -1n) fail("integer overflow");
      return l % r;
    }),
    // cel-go parses int(string) with strconv.ParseInt(s, 10, 64): optional
    // sign and decimal digits only. The oracle uses JS BigInt(), which
    // accepts '' and ' ' (as 0), surrounding blanks and 0x/0o/0b prefixes.
    cel.celFunc("int", [STRING], INT, (s) => {
      if (!/^[+-]?[0-9]+$/.test(s)) fail(`cannot convert '${s}' to int`);
      const v = BigInt(s);
      if (v < MIN_INT || v > MAX_INT) fail("integer overflow");
      return v;
    }),
  ];
}

export const KNOWN_DIFFERENCES = [];
