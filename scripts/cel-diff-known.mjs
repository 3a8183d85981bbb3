// Known, reasoned differences between @bufbuild/cel (the oracle) and
// cel-go (what Kubernetes runs, and what the dra engine follows). A case
// that disagrees is forgiven only when one of these matchers accepts it;
// each entry says why the oracle, not dra, is wrong. Documented in
// docs/cel-differential.md.
//
// match(c, got): c = {expr, device, want, wantMsg} (oracle outcome T/F/E),
// got = {kind, msg} (dra outcome T/F/E/C).
export const KNOWN_DIFFERENCES = [];
