/* End-to-end tests of the CEL libraries (src/cel/lib_*.c) through the
 * engine: each case compiles an expression in the DRA or the standard
 * environment, evaluates it and compares the printed result ("OK:" plus
 * the CEL literal) or the error text ("ERR:" plus a substring of the
 * compile or evaluation message). Expected values come from the
 * Kubernetes and cel-go documentation and sources. */
#include "dra_test.h"

#include "dra/cel.h"

typedef struct lcase {
    char env; /* 'd' DRA (result wrapped in dyn()), 's' standard */
    const char *expr;
    const char *want;
} lcase;

static const lcase quantity_cases[] = {
    {'d', "quantity('189471Mi').compareTo(quantity('185Gi'))", "OK:1"},
    {'d', "quantity('200M').compareTo(quantity('0.2G'))", "OK:0"},
    {'d', "quantity('50M').compareTo(quantity('50Mi'))", "OK:-1"},
    {'d', "quantity('50Mi').compareTo(quantity('50M'))", "OK:1"},
    {'d', "quantity('150Mi').isGreaterThan(quantity('100Mi'))", "OK:true"},
    {'d', "quantity('50Mi').isGreaterThan(quantity('100Mi'))", "OK:false"},
    {'d', "quantity('50M').isLessThan(quantity('100M'))", "OK:true"},
    {'d', "quantity('100M').isLessThan(quantity('50M'))", "OK:false"},
    {'d', "quantity('50k').add(20) == quantity('50020')", "OK:true"},
    {'d', "quantity('50k').add(quantity('20k')) == quantity('70k')", "OK:true"},
    {'d', "quantity('50k').sub(quantity('20k')) == quantity('30k')", "OK:true"},
    {'d', "quantity('50k').sub(20000) == quantity('30k')", "OK:true"},
    {'d', "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
     "OK:true"},
    {'d', "quantity('50000000G').isInteger()", "OK:true"},
    {'d', "quantity('50k').isInteger()", "OK:true"},
    {'d', "quantity('9999999999999999999999999999999999999G').isInteger()", "OK:false"},
    {'d', "quantity('9999999999999999999999999999999999999G').asInteger()",
     "ERR:cannot convert value to integer"},
    {'d', "quantity('1.5m').asInteger()", "ERR:cannot convert value to integer"},
    {'d', "quantity('50k').asInteger()", "OK:50000"},
    {'d', "quantity('50k').sub(20000).asApproximateFloat() == 30000.0", "OK:true"},
    {'d', "quantity('1.5').asApproximateFloat()", "OK:1.5"},
    {'d', "sign(quantity('-5'))", "OK:-1"},
    {'d', "sign(quantity('0'))", "OK:0"},
    {'d', "sign(quantity('3m'))", "OK:1"},
    {'d', "quantity('200M') == quantity('0.2G')", "OK:true"},
    {'d', "isQuantity('1.3Gi')", "OK:true"},
    {'d', "isQuantity('10000k')", "OK:true"},
    {'d', "isQuantity('1,3G')", "OK:false"},
    {'d', "isQuantity('200K')", "OK:false"},
    {'d', "isQuantity('Three')", "OK:false"},
    {'d', "isQuantity('Mi')", "OK:false"},
    {'d', "quantity('200K')", "ERR:unable to parse quantity's suffix"},
    {'d', "quantity('Three')", "ERR:quantities must match the regular expression"},
    {'d', "quantity('1') < quantity('2')", "ERR:found no matching overload for '_<_'"},
    {'d', "quantity('1').sign()", "ERR:found no matching overload for 'sign'"},
};

static const lcase semver_cases[] = {
    {'d', "semver('1.2.3').major()", "OK:1"},
    {'d', "semver('1.2.3').minor()", "OK:2"},
    {'d', "semver('1.2.3').patch()", "OK:3"},
    {'d', "semver('1.2.3').compareTo(semver('1.2.3'))", "OK:0"},
    {'d', "semver('1.2.3').compareTo(semver('2.0.0'))", "OK:-1"},
    {'d', "semver('1.2.3').compareTo(semver('0.1.2'))", "OK:1"},
    {'d', "semver('1.0.0').compareTo(semver('1.0.0-alpha'))", "OK:1"},
    {'d', "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", "OK:true"},
    {'d', "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))", "OK:true"},
    {'d', "semver('1.0.0-alpha.beta').compareTo(semver('1.0.0-beta'))", "OK:-1"},
    {'d', "semver('1.0.0-beta.2').compareTo(semver('1.0.0-beta.11'))", "OK:-1"},
    {'d', "semver('1.0.0-rc.1').isGreaterThan(semver('1.0.0-beta.11'))", "OK:true"},
    {'d', "semver('1.0.0-rc.1').compareTo(semver('1.0.0'))", "OK:-1"},
    {'d', "semver('1.0.0+a').compareTo(semver('1.0.0+b'))", "OK:0"},
    {'d', "semver('1.0.0+a') == semver('1.0.0+b')", "OK:true"},
    {'d', "semver('v1.0.0', true) == semver('1.0.0')", "OK:true"},
    {'d', "semver('1.0', true) == semver('1.0.0')", "OK:true"},
    {'d', "semver('01.01.01', true).patch()", "OK:1"},
    {'d', "isSemver('1.0.0')", "OK:true"},
    {'d', "isSemver('hello')", "OK:false"},
    {'d', "isSemver('v1.0')", "OK:false"},
    {'d', "isSemver('v1.0', true)", "OK:true"},
    {'d', "isSemver('1.0.0-01')", "OK:false"},
    {'d', "semver('1.2-rc', true)", "ERR:short version cannot contain PreRelease/Build meta data"},
    {'d', "semver('200K')", "ERR:No Major.Minor.Patch elements found"},
    {'d', "semver('1.0.0-01')",
     "ERR:Numeric PreRelease version must not contain leading zeroes \"01\""},
    {'d', "semver('01.0.0')", "ERR:Major number must not contain leading zeroes \"01\""},
};

static const lcase strings_cases[] = {
    {'s', "'hello'.charAt(4)", "OK:\"o\""},
    {'s', "'hello'.charAt(5)", "OK:\"\""},
    {'s', "'hello'.charAt(-1)", "ERR:index out of range: -1"},
    {'s', "'hello'.charAt(6)", "ERR:index out of range: 6"},
    {'s', "'\u5c0f\u732b'.charAt(1) == '\u732b'", "OK:true"},
    {'s', "'hello mellow'.indexOf('')", "OK:0"},
    {'s', "'hello mellow'.indexOf('ello')", "OK:1"},
    {'s', "'hello mellow'.indexOf('jello')", "OK:-1"},
    {'s', "'hello mellow'.indexOf('', 2)", "OK:2"},
    {'s', "'hello mellow'.indexOf('ello', 2)", "OK:7"},
    {'s', "'hello mellow'.indexOf('ello', 20)", "ERR:index out of range: 20"},
    {'s', "'\u5c0f\u732b\u732b'.indexOf('\u732b')", "OK:1"},
    {'s', "'hello mellow'.lastIndexOf('')", "OK:12"},
    {'s', "'hello mellow'.lastIndexOf('ello')", "OK:7"},
    {'s', "'hello mellow'.lastIndexOf('jello')", "OK:-1"},
    {'s', "'hello mellow'.lastIndexOf('ello', 6)", "OK:1"},
    {'s', "'hello mellow'.lastIndexOf('ello', -1)", "ERR:index out of range: -1"},
    {'s', "'\u5c0f\u732b\u732b'.lastIndexOf('\u732b')", "OK:2"},
    {'s', "'TacoCat'.lowerAscii()", "OK:\"tacocat\""},
    {'s', "'TacoC\u00c6t Xii'.lowerAscii() == 'tacoc\u00c6t xii'", "OK:true"},
    {'s', "'TacoC\u00e6t Xii'.upperAscii() == 'TACOC\u00e6T XII'", "OK:true"},
    {'s', "'hello hello'.replace('he', 'we')", "OK:\"wello wello\""},
    {'s', "'hello hello'.replace('he', 'we', -1)", "OK:\"wello wello\""},
    {'s', "'hello hello'.replace('he', 'we', 1)", "OK:\"wello hello\""},
    {'s', "'hello hello'.replace('he', 'we', 0)", "OK:\"hello hello\""},
    {'s', "'hello'.replace('', '_')", "OK:\"_h_e_l_l_o_\""},
    {'s', "'hello'.replace('', '_', 2)", "OK:\"_h_ello\""},
    {'s', "'hello hello hello'.split(' ')", "OK:[\"hello\", \"hello\", \"hello\"]"},
    {'s', "'hello hello hello'.split(' ', 0)", "OK:[]"},
    {'s', "'hello hello hello'.split(' ', 1)", "OK:[\"hello hello hello\"]"},
    {'s', "'hello hello hello'.split(' ', 2)", "OK:[\"hello\", \"hello hello\"]"},
    {'s', "'hello hello hello'.split(' ', -1)", "OK:[\"hello\", \"hello\", \"hello\"]"},
    {'s', "'abc'.split('')", "OK:[\"a\", \"b\", \"c\"]"},
    {'s', "'abc'.split('', 2)", "OK:[\"a\", \"bc\"]"},
    {'s', "''.split(',')", "OK:[\"\"]"},
    {'s', "'a,b,'.split(',')", "OK:[\"a\", \"b\", \"\"]"},
    {'s', "'tacocat'.substring(4)", "OK:\"cat\""},
    {'s', "'tacocat'.substring(0, 4)", "OK:\"taco\""},
    {'s', "'tacocat'.substring(7)", "OK:\"\""},
    {'s', "'tacocat'.substring(-1)", "ERR:index out of range: -1"},
    {'s', "'tacocat'.substring(8)", "ERR:index out of range: 8"},
    {'s', "'tacocat'.substring(2, 1)", "ERR:invalid substring range. start: 2, end: 1"},
    {'s', "'tacocat'.substring(1, 9)", "ERR:index out of range: 9"},
    {'s', "'\u5c0f\u732b\u732bx'.substring(1, 3) == '\u732b\u732b'", "OK:true"},
    {'s', "'  \\ttrim\\n    '.trim()", "OK:\"trim\""},
    {'s', "'\u00a0\u2003x y\u3000\xc2\x85'.trim()", "OK:\"x y\""},
    {'s', "'\u200bx'.trim() == '\u200bx'", "OK:true"}, /* zero-width space stays */
    {'s', "['hello', 'mellow'].join()", "OK:\"hellomellow\""},
    {'s', "['hello', 'mellow'].join(' ')", "OK:\"hello mellow\""},
    {'s', "[].join()", "OK:\"\""},
    {'s', "[].join('/')", "OK:\"\""},
    {'s', "strings.quote('a\"b\\\\c') == '\"a\\\\\"b\\\\\\\\c\"'", "OK:true"},
    {'s', "strings.quote('\\a\\b\\f\\n\\r\\t\\v') == '\"\\\\a\\\\b\\\\f\\\\n\\\\r\\\\t\\\\v\"'",
     "OK:true"},
    {'s', "strings.quote('\u00e9') == '\"\u00e9\"'", "OK:true"},
    {'s', "'gums'.reverse()", "OK:\"smug\""},
    /* 100,000 'a's searched for 50,000 'a's and a 'b': linear, not 5e9 steps. */
    {'s', "cel.bind(s, 'aaaaaaaaaa'.replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa')"
          ".replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa'), "
          "[s.indexOf(s.substring(0, 50000) + 'b'), s.lastIndexOf(s.substring(0, 50000) + 'b'),"
          " s.lastIndexOf(s.substring(0, 50000)), s.split(s.substring(0, 49999) + 'b').size()])",
     "OK:[-1, -1, 50000, 1]"},
    {'s', "'\u5c0f\u732bx'.reverse() == 'x\u732b\u5c0f'", "OK:true"},
    /* Kubernetes enables ext.Strings version 2: no reverse. */
    {'d', "'gums'.reverse() == 'smug'", "ERR:found no matching overload for 'reverse'"},
    {'d', "['a', 'b'].join('-') == 'a-b'", "OK:true"},
    {'d', "'a.b.c'.split('.').size() == 3", "OK:true"},
    /* format: spec (version 4) rendering in the standard env... */
    {'s', "'%s and %d'.format(['x', 42])", "OK:\"x and 42\""},
    {'s', "'%s'.format([['abc', 3.14, null, [9, 8]]])", "OK:\"[abc, 3.14, null, [9, 8]]\""},
    {'s', "'%s'.format([{'b': 1, 'a': true}])", "OK:\"{a: true, b: 1}\""},
    {'s', "'%.3f %e %x %X %o %b'.format([1.2345, 1052.032911275, 30, 'Hi', 8, 5])",
     "OK:\"1.234 1.052033e+03 1e 4869 10 101\""},
    {'s', "'%d'.format([double('NaN')])", "OK:\"NaN\""},
    {'s', "'%s'.format([1000000.0])", "OK:\"1e+06\""},
    {'s', "'%d %d'.format([1])", "ERR:index 1 out of range"},
    {'s', "'%a'.format([1])",
     "ERR:could not parse formatting clause: unrecognized formatting clause \"a\""},
    {'s', "'%d'.format([duration('1s')])",
     "ERR:error during formatting: decimal clause can only be used on integers, was given "
     "google.protobuf.Duration"},
    /* ...and cel-go's legacy rendering in the DRA env (strings version 2). */
    {'d', "'%s %s'.format([dyn(['abc', 'd']), dyn([1.5])])", "OK:\"[\\\"abc\\\", \\\"d\\\"] [1.500000]\""},
    {'d', "'%s'.format([{'k': duration('2s')}])", "OK:\"{\\\"k\\\":duration(\\\"2s\\\")}\""},
    {'d', "'%d'.format([double('NaN')])", "ERR:decimal clause can only be used on integers"},
    {'d', "'%f'.format(['NaN'])", "OK:\"NaN\""},
    {'d', "'%.3e'.format([1052.032911275])", "OK:\"1.052033e+03\""},
    {'d', "'%.12e'.format([1.5])", "OK:\"1.500000e+00\""},
};

static const lcase lists_cases[] = {
    {'d', "[1, 2, 3].isSorted()", "OK:true"},
    {'d', "[1, 3, 2].isSorted()", "OK:false"},
    {'d', "['a', 'b', 'b'].isSorted()", "OK:true"},
    {'d', "[1, 2, 3].sum()", "OK:6"},
    {'d', "[1u, 2u].sum()", "OK:3u"},
    {'d', "[1.5, 2.5].sum()", "OK:4.0"},
    {'d', "[duration('1s'), duration('2.5s')].sum() == duration('3.5s')", "OK:true"},
    {'d', "[9223372036854775807, 1].sum()", "ERR:overflow"},
    {'d', "[1, 2, 3].min()", "OK:1"},
    {'d', "[3, 1, 2].max()", "OK:3"},
    {'d', "['b', 'a', 'c'].min()", "OK:\"a\""},
    {'d', "[timestamp('2020-01-01T00:00:00Z'), timestamp('2019-01-01T00:00:00Z')].min() "
          "== timestamp('2019-01-01T00:00:00Z')", "OK:true"},
    {'d', "[1, 2, 3, 2].indexOf(2)", "OK:1"},
    {'d', "[1, 2, 3, 2].lastIndexOf(2)", "OK:3"},
    {'d', "[1, 2, 3].indexOf(5)", "OK:-1"},
    {'d', "['a', 'b'].lastIndexOf('c')", "OK:-1"},
    {'d', "[1, 2, 3, 4].slice(1, 3)", "OK:[2, 3]"},
    {'d', "[1, 2, 3, 4].slice(4, 4)", "OK:[]"},
    {'d', "[1, 2, 3, 4].slice(3, 1)",
     "ERR:cannot slice(3, 1), start index must be less than or equal to end index"},
    {'d', "[1, 2, 3, 4].slice(-1, 2)", "ERR:cannot slice(-1, 2), negative indexes not supported"},
    {'d', "[1, 2, 3, 4].slice(0, 5)", "ERR:cannot slice(0, 5), list is length 4"},
    {'d', "[[1, 2], [3]].flatten()", "OK:[1, 2, 3]"},
    /* Mixed literals are rejected in the DRA env (homogeneous literals). */
    {'s', "[1, [2, [3, [4]]]].flatten(2)", "OK:[1, 2, 3, [4]]"},
    {'s', "[1, [2, [3, [4]]]].flatten(0)", "OK:[1, [2, [3, [4]]]]"},
    {'s', "[1, [2]].flatten(-1)", "ERR:level must be non-negative"},
    {'d', "lists.range(3)", "OK:[0, 1, 2]"},
    {'d', "lists.range(0)", "OK:[]"},
    {'d', "[1, 2, 2, 1, 3].distinct()", "OK:[1, 2, 3]"},
    {'d', "[3, 1, 2].reverse()", "OK:[2, 1, 3]"},
    {'d', "['c', 'a', 'b'].sort()", "OK:[\"a\", \"b\", \"c\"]"},
    {'d', "[3, 1, 2].sort()", "OK:[1, 2, 3]"},
    {'d', "[3, 1, 2].sortBy(x, -x)", "OK:[3, 2, 1]"},
    {'d', "['bb', 'a', 'ccc'].sortBy(s, size(s))", "OK:[\"a\", \"bb\", \"ccc\"]"},
    {'d', "[dyn(1), dyn('a')].sort()", "ERR:list elements must have the same type"},
    {'d', "sets.contains([1, 2, 3], [1, 3])", "OK:true"},
    {'d', "sets.contains([1], [2])", "OK:false"},
    {'d', "sets.contains([1, 2], [])", "OK:true"},
    {'d', "sets.equivalent([1, 2, 3], [3, 2, 1, 1])", "OK:true"},
    {'d', "sets.equivalent([1], [1, 2])", "OK:false"},
    {'d', "sets.intersects([1, 2], [2, 3])", "OK:true"},
    {'d', "sets.intersects([1], [])", "OK:false"},
    {'s', "sets.contains([dyn(1.0)], [dyn(1)])", "OK:true"},
    {'s', "[1, 1.0, 1u, 2].distinct()", "OK:[1, 2]"},
    {'s', "[[1], [1], [2]].distinct()", "OK:[[1], [2]]"},
    /* Long lists stay fast (hashing), whatever the cost limit then says. */
    {'s', "lists.range(200000).distinct().size()", "ERR:actual cost limit exceeded"},
    {'s', "sets.intersects(lists.range(200000), [199999])", "OK:true"},
};

static const lcase regex_cases[] = {
    {'d', "'abc123def456'.find('[0-9]+')", "OK:\"123\""},
    {'d', "'abc'.find('x')", "OK:\"\""},
    {'d', "'abc123def456'.findAll('[0-9]+')", "OK:[\"123\", \"456\"]"},
    {'d', "'abc123def456'.findAll('[0-9]+', 1)", "OK:[\"123\"]"},
    {'d', "'abc123def456'.findAll('[0-9]+', 0)", "OK:[]"},
    {'d', "'baaab'.findAll('a*')", "OK:[\"\", \"aaa\", \"\"]"},
    {'d', "'abc'.findAll('x*')", "OK:[\"\", \"\", \"\", \"\"]"},
    {'d', "'\u65e5\u672c'.findAll('')", "OK:[\"\", \"\", \"\"]"},
    {'d', "'0000:03:00.0'.find('^0000:0[0-9]:')", "OK:\"0000:03:\""},
    {'d', "['(', 'a'].exists(p, 'x'.find(p) == 'x')", "ERR:Illegal regex: error parsing regexp: missing closing )"},
};

static const lcase time_cases[] = {
    {'d', "timestamp('2009-02-13T23:31:30Z').getFullYear()", "OK:2009"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getMonth()", "OK:1"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getDate()", "OK:13"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getDayOfMonth()", "OK:12"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", "OK:5"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getDayOfYear()", "OK:43"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours()", "OK:23"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getMinutes()", "OK:31"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getSeconds()", "OK:30"},
    {'d', "timestamp('2009-02-13T23:31:30.123456789Z').getMilliseconds()", "OK:123"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('America/Los_Angeles')", "OK:15"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('+05:30')", "OK:5"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getMinutes('+05:30')", "OK:1"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getDate('+05:30')", "OK:14"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('-08:00')", "OK:15"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('UTC')", "OK:23"},
    {'d', "timestamp('2009-12-31T23:00:00Z').getFullYear('Asia/Tokyo')", "OK:2010"},
    {'d', "timestamp('2009-12-31T23:00:00Z').getDayOfYear('Asia/Tokyo')", "OK:0"},
    /* Across the 2024 DST start in Los Angeles (02:00 PST -> 03:00 PDT). */
    {'d', "timestamp('2024-03-10T09:59:59Z').getHours('America/Los_Angeles')", "OK:1"},
    {'d', "timestamp('2024-03-10T10:00:00Z').getHours('America/Los_Angeles')", "OK:3"},
    {'d', "timestamp('2024-03-10T07:59:59Z').getDayOfWeek('America/Los_Angeles')", "OK:6"},
    {'d', "timestamp('2024-11-03T08:59:59Z').getHours('America/Los_Angeles')", "OK:1"},
    {'d', "timestamp('2024-11-03T09:00:00Z').getHours('America/Los_Angeles')", "OK:1"},
    {'d', "timestamp('2124-07-01T12:00:00Z').getHours('America/Los_Angeles')", "OK:5"},
    /* Several zones in one evaluation (loaded once per VM, then cached). */
    {'d', "cel.bind(t, timestamp('2009-02-13T23:31:30Z'), [t.getHours('America/Los_Angeles'), "
          "t.getMinutes('America/Los_Angeles'), t.getHours('Asia/Kolkata'), "
          "t.getDayOfWeek('Pacific/Kiritimati')])", "OK:[15, 31, 5, 6]"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('Nowhere/City')",
     "ERR:unknown time zone Nowhere/City"},
    {'d', "timestamp('2009-02-13T23:31:30Z').getHours('x:00')", "ERR:invalid syntax"},
    {'d', "duration('1h30m').getHours()", "OK:1"},
    {'d', "duration('1h30m').getMinutes()", "OK:90"},
    {'d', "duration('1h30m').getSeconds()", "OK:5400"},
    {'d', "duration('1.5s').getMilliseconds()", "OK:1500"},
    {'d', "duration('-90m').getHours()", "OK:-1"},
    {'d', "string(duration('1h30m'))", "OK:\"5400s\""},
    {'d', "string(duration('-1.5s'))", "OK:\"-1.5s\""},
    {'d', "string(duration('1ns'))", "OK:\"0.000000001s\""},
    {'d', "string(timestamp('2009-02-13T23:31:30.120Z'))", "OK:\"2009-02-13T23:31:30.12Z\""},
    {'d', "string(timestamp('2009-02-14T00:31:30+01:00')) == '2009-02-13T23:31:30Z'",
     "OK:true"},
    {'d', "int(timestamp('2009-02-13T23:31:30Z'))", "OK:1234567890"},
    {'d', "timestamp(1234567890) == timestamp('2009-02-13T23:31:30Z')", "OK:true"},
    {'d', "int(duration('1s'))", "OK:1000000000"},
    {'d', "timestamp('2000-01-01T00:00:00Z') - timestamp('1999-12-31T00:00:00Z') "
          "== duration('24h')", "OK:true"},
    {'d', "timestamp('2009-02-13T23:31:30Z') + duration('1.5s') == "
          "timestamp('2009-02-13T23:31:31.5Z')", "OK:true"},
    {'d', "duration('1.5s') + timestamp('2009-02-13T23:31:30Z') == "
          "timestamp('2009-02-13T23:31:31.5Z')", "OK:true"},
    {'d', "timestamp('2009-02-13T23:31:30Z') - duration('30s') == "
          "timestamp('2009-02-13T23:31:00Z')", "OK:true"},
    {'d', "duration('1m') - duration('1s') == duration('59s')", "OK:true"},
    {'d', "timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')",
     "ERR:timestamp overflow"},
    {'d', "timestamp('0001-01-01T00:00:00Z') - duration('1ns')", "ERR:timestamp overflow"},
    {'d', "timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')",
     "ERR:duration overflow"},
    {'d', "duration('9223372036854775807ns') + duration('1ns')", "ERR:duration overflow"},
    {'d', "timestamp(253402300800)", "ERR:timestamp overflow"},
    {'d', "timestamp('2009-02-13T23:31:30Z') < timestamp('2009-02-13T23:31:31Z')",
     "OK:true"},
};

static const lcase math_cases[] = {
    {'s', "math.greatest(1, 2.5)", "OK:2.5"},
    {'s', "math.greatest([3u, 7u, 5u])", "OK:7u"},
    {'s', "math.least(5.4, 10, 3u, -5.0) == -5.0", "OK:true"},
    {'s', "math.least([])", "ERR:math.@min(list) argument must not be empty"},
    {'s', "math.round(-1.5)", "OK:-2.0"},
    {'s', "math.trunc(-1.7)", "OK:-1.0"},
    {'s', "math.abs(-9223372036854775808)", "ERR:overflow"},
    {'s', "math.sign(-3)", "OK:-1"},
    {'s', "math.bitShiftRight(-1024, 3)", "OK:2305843009213693824"},
    {'s', "math.bitShiftLeft(1u, -1)", "ERR:negative offset"},
    {'s', "math.bitNot(0u)", "OK:18446744073709551615u"},
    {'d', "math.abs(-1) == 1", "ERR:undeclared reference to 'math'"},
};

static const lcase net_cases[] = {
    {'d', "ip('127.0.0.1').family()", "OK:4"},
    {'d', "ip('::1').family()", "OK:6"},
    {'d', "ip('0.0.0.0').isUnspecified()", "OK:true"},
    {'d', "ip('::').isUnspecified()", "OK:true"},
    {'d', "ip('::1').isUnspecified()", "OK:false"},
    {'d', "ip('127.0.0.1').isLoopback()", "OK:true"},
    {'d', "ip('2001:db8::abcd').isLoopback()", "OK:false"},
    {'d', "ip('224.0.0.1').isLinkLocalMulticast()", "OK:true"},
    {'d', "ip('224.0.1.1').isLinkLocalMulticast()", "OK:false"},
    {'d', "ip('ff02::1').isLinkLocalMulticast()", "OK:true"},
    {'d', "ip('fd00::1').isLinkLocalMulticast()", "OK:false"},
    {'d', "ip('169.254.169.254').isLinkLocalUnicast()", "OK:true"},
    {'d', "ip('fe80::1').isLinkLocalUnicast()", "OK:true"},
    {'d', "ip('fd80::1').isLinkLocalUnicast()", "OK:false"},
    {'d', "ip('192.168.0.1').isGlobalUnicast()", "OK:true"},
    {'d', "ip('255.255.255.255').isGlobalUnicast()", "OK:false"},
    {'d', "ip('2001:db8::abcd').isGlobalUnicast()", "OK:true"},
    {'d', "ip('ff00::1').isGlobalUnicast()", "OK:false"},
    {'d', "string(ip('2001:DB8:0:0:0::1'))", "OK:\"2001:db8::1\""},
    {'d', "string(ip('1:0:0:1:0:0:0:1'))", "OK:\"1:0:0:1::1\""},
    {'d', "string(ip('::ffff:0:1.2.3.4'))", "OK:\"::ffff:0:102:304\""},
    {'d', "ip.isCanonical('127.0.0.1')", "OK:true"},
    {'d', "ip.isCanonical('2001:db8::abcd')", "OK:true"},
    {'d', "ip.isCanonical('2001:DB8::ABCD')", "OK:false"},
    {'d', "ip.isCanonical('2001:db8:0:0:0:0:2:1')", "OK:false"},
    {'d', "isIP('1.2.3.4')", "OK:true"},
    {'d', "isIP('1.2.3')", "OK:false"},
    {'d', "isIP('::ffff:1.2.3.4')", "OK:false"},
    {'d', "isIP('fe80::1%eth0')", "OK:false"},
    {'d', "ip('1.2.3')", "ERR:IP Address \"1.2.3\" parse error during conversion from string: "
                         "ParseAddr(\"1.2.3\"): IPv4 address too short"},
    {'d', "ip('01.2.3.4')", "ERR:IPv4 field has octet with leading zero"},
    {'d', "ip('1::2::3')", "ERR:multiple :: in address"},
    {'d', "ip('x')", "ERR:ParseAddr(\"x\"): unable to parse IP"},
    {'d', "ip('::ffff:1.2.3.4')",
     "ERR:IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"},
    {'d', "ip('fe80::1%eth0')", "ERR:IP address \"fe80::1%eth0\" with zone value is not allowed"},
    {'d', "ip('1.2.3.4') == ip('1.2.3.4')", "OK:true"},
    {'d', "ip('::1') == ip('::2')", "OK:false"},
    {'d', "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", "OK:true"},
    {'d', "cidr('192.168.0.0/24').containsIP('192.168.1.1')", "OK:false"},
    {'d', "cidr('192.168.0.0/24').containsIP('::1')", "OK:false"},
    {'d', "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))", "OK:true"},
    {'d', "cidr('192.168.1.0/24').containsCIDR(cidr('192.168.2.0/24'))", "OK:false"},
    {'d', "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')", "OK:true"},
    {'d', "cidr('192.168.10.0/24').containsCIDR('192.168.0.0/16')", "OK:false"},
    {'d', "cidr('2001:db8::/32').containsIP('2001:db8:ffff::1')", "OK:true"},
    {'d', "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", "OK:true"},
    {'d', "cidr('::1/128').ip().family()", "OK:6"},
    {'d', "string(cidr('192.168.0.1/24').masked())", "OK:\"192.168.0.0/24\""},
    {'d', "cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", "OK:true"},
    {'d', "cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", "OK:false"},
    {'d', "cidr('192.168.0.0/16').prefixLength()", "OK:16"},
    {'d', "isCIDR('10.0.0.0/8')", "OK:true"},
    {'d', "isCIDR('10.0.0.0/33')", "OK:false"},
    {'d', "isCIDR('10.0.0.0/08')", "OK:false"},
    {'d', "cidr('10.0.0.0')", "ERR:netip.ParsePrefix(\"10.0.0.0\"): no '/'"},
    {'d', "cidr('10.0.0.0/33')", "ERR:prefix length out of range"},
};

static const lcase format_lib_cases[] = {
    {'d', "format.dns1123Label().validate('my-name')", "OK:optional.none()"},
    {'d', "format.dns1123Label().validate('My_Name').hasValue()", "OK:true"},
    {'d', "format.dns1123Label().validate('My_Name').value()[0]",
     "OK:\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
     "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
     "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\""},
    {'d', "format.dns1123LabelPrefix().validate('my-prefix-').hasValue()", "OK:false"},
    {'d', "format.dns1123Label().validate('my-prefix-').hasValue()", "OK:true"},
    {'d', "format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue()", "OK:false"},
    {'d', "format.dns1123Subdomain().validate('a..b').hasValue()", "OK:true"},
    {'d', "format.dns1035Label().validate('1abc').hasValue()", "OK:true"},
    {'d', "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue()",
     "OK:false"},
    {'d', "format.qualifiedName().validate('/x').value()", "OK:[\"prefix part must be non-empty\"]"},
    {'d', "format.qualifiedName().validate('a/b/c').value().size()", "OK:1"},
    {'d', "format.labelValue().validate('').hasValue()", "OK:false"},
    {'d', "format.labelValue().validate('-x').hasValue()", "OK:true"},
    {'d', "format.uri().validate('http://example.com').hasValue()", "OK:false"},
    {'d', "format.uri().validate('example').value()",
     "OK:[\"parse \\\"example\\\": invalid URI for request\"]"},
    {'d', "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
     "OK:false"},
    {'d', "format.uuid().validate('123e4567').value()", "OK:[\"does not match the UUID format\"]"},
    {'d', "format.byte().validate('aGVsbG8=').hasValue()", "OK:false"},
    {'d', "format.byte().validate('aGVsbG8').value()", "OK:[\"invalid base64\"]"},
    {'d', "format.date().validate('2021-01-01').hasValue()", "OK:false"},
    {'d', "format.date().validate('2021-02-30').value()", "OK:[\"invalid date\"]"},
    {'d', "format.datetime().validate('2021-01-01T00:00:00Z').hasValue()", "OK:false"},
    {'d', "format.datetime().validate('2021-01-01').value()", "OK:[\"invalid datetime\"]"},
    {'d', "format.named('dns1123Label').hasValue()", "OK:true"},
    {'d', "format.named('nope').hasValue()", "OK:false"},
    {'d', "format.named('uuid').value().validate('x').hasValue()", "OK:true"},
    /* URLs */
    {'d', "url('https://user:pw@example.com:80/path?k=v#f').getScheme()", "OK:\"https\""},
    {'d', "url('HTTPS://example.com').getScheme()", "OK:\"https\""},
    {'d', "url('https://user:pw@example.com:80/path?k=v#f').getHost()", "OK:\"example.com:80\""},
    {'d', "url('https://example.com:80/path').getHostname()", "OK:\"example.com\""},
    {'d', "url('https://example.com:80/path').getPort()", "OK:\"80\""},
    {'d', "url('https://[::1]:80/path').getHostname()", "OK:\"::1\""},
    {'d', "url('https://[::1]/path').getPort()", "OK:\"\""},
    {'d', "url('https://example.com/path%20x?q').getEscapedPath()", "OK:\"/path%20x\""},
    {'d', "url('/absolute-path').getEscapedPath()", "OK:\"/absolute-path\""},
    {'d', "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()",
     "OK:{\"k1\": [\"a\"], \"k2\": [\"b\", \"c\"]}"},
    {'d', "url('https://example.com/path?key+with+spaces=value%20with%20spaces').getQuery()",
     "OK:{\"key with spaces\": [\"value with spaces\"]}"},
    {'d', "url('https://example.com/path?').getQuery()", "OK:{}"},
    {'d', "url('https://example.com/p?a=1;b=2&c=%zz&d=4&&e&=x#frag').getQuery()",
     "OK:{\"d\": [\"4\"], \"e\": [\"\"]}"},
    {'d', "url('https://example.com/path').getQuery()", "OK:{}"},
    {'d', "isURL('https://example.com')", "OK:true"},
    {'d', "isURL('example.com')", "OK:false"},
    {'d', "isURL('/relative')", "OK:true"},
    {'d', "isURL('/a%zz')", "OK:false"},
    {'d', "isURL('/a?%zz')", "OK:true"},
    {'d', "url('example.com')",
     "ERR:URL parse error during conversion from string: parse \"example.com\": invalid URI "
     "for request"},
    {'d', "url('https://example.com') == url('https://example.com')", "OK:true"},
};

/* Compiles and evaluates |c|; returns "OK:<literal>" or "ERR:<text>". */
static char *run_case(const lcase *c)
{
    dra_cel_env *env = NULL;
    dra_cel_vm *vm = NULL;
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_buf out, src;
    dra_err e;
    char *res;
    dra_diag_init(&d, NULL);
    dra_buf_init(&out, NULL);
    dra_buf_init(&src, NULL);
    if (c->env == 'd') {
        assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);
        dra_buf_printf(&src, "dyn(%s)", c->expr);
    } else {
        assert_int_equal(dra_cel_env_new_std(NULL, NULL, &env), DRA_OK);
        dra_buf_puts(&src, c->expr);
    }
    assert_int_equal(dra_cel_vm_new(NULL, &vm), DRA_OK);
    e = dra_cel_compile(env, src.p, src.len, &p, &d);
    if (e == DRA_OK) {
        e = dra_cel_eval_json(p, vm, NULL, &out, &d);
        if (e == DRA_OK) {
            dra_buf b;
            dra_buf_init(&b, NULL);
            dra_buf_printf(&b, "OK:%s", out.p ? out.p : "");
            res = dra_buf_detach(&b);
            dra_buf_fini(&b);
            goto done;
        }
    }
    {
        dra_buf b, msg;
        dra_buf_init(&b, NULL);
        dra_buf_init(&msg, NULL);
        dra_diag_format(&d, &msg);
        dra_buf_printf(&b, "ERR:%s", msg.p ? msg.p : "");
        res = dra_buf_detach(&b);
        dra_buf_fini(&msg);
        dra_buf_fini(&b);
    }
done:
    dra_cel_program_unref(p);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    dra_buf_fini(&out);
    dra_buf_fini(&src);
    dra_diag_fini(&d);
    return res;
}

static void run_table(const lcase *cases, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *got = run_case(&cases[i]);
        const char *want = cases[i].want;
        int ok = strncmp(want, "OK:", 3) == 0 ? strcmp(got, want) == 0
                                               : strncmp(got, "ERR:", 4) == 0 &&
                                                     strstr(got + 4, want + 4) != NULL;
        if (!ok) {
            print_error("%c %s\n  want %s\n  got  %s\n", cases[i].env, cases[i].expr,
                        want, got);
            bad++;
        }
        free(got);
    }
    assert_int_equal(bad, 0);
}

#define TABLE(name, t)                                    \
    static void name(void **state)                       \
    {                                                    \
        (void)state;                                     \
        run_table(t, sizeof t / sizeof t[0]);            \
    }
TABLE(test_quantity, quantity_cases)
TABLE(test_semver, semver_cases)
TABLE(test_strings, strings_cases)
TABLE(test_lists, lists_cases)
TABLE(test_regex, regex_cases)
TABLE(test_time, time_cases)
TABLE(test_math, math_cases)
TABLE(test_net, net_cases)
TABLE(test_format_lib, format_lib_cases)

/* Allocation failures inside library calls (scratch arena, the VM's zone
 * cache, PCRE2 match data, format buffers): every evaluation ends in a
 * value or an error, and nothing leaks once the VM is freed. */
static void test_lib_failmalloc(void **state)
{
    static const char *const exprs[] = {
        "timestamp('2024-03-10T10:00:00Z').getHours('America/Los_Angeles') == 3",
        "'a,b,c'.split(',').join('-') == 'a-b-c'",
        "'%s %d'.format([dyn(['x', 'y']), dyn(42)]).size() > 0",
        "'abc123'.findAll('[0-9]').size() == 3",
        "sets.contains(lists.range(50), [49]) && [3, 1, 2].sort()[0] == 1",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && url('https://x.io/p?a=1').getQuery()['a'][0] == '1'",
        "quantity('1Gi').add(quantity('1Mi')).isGreaterThan(quantity('1Gi'))",
    };
    dra_cel_env *env = NULL;
    (void)state;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        dra_cel_program *p = NULL;
        assert_int_equal(dra_cel_compile(env, exprs[i], strlen(exprs[i]), &p, NULL), DRA_OK);
        for (long n = 0;; n++) {
            dra_failmem fm;
            dra_cel_vm *vm = NULL;
            dra_buf out;
            dra_err e;
            dra_failmem_init(&fm, n);
            dra_buf_init(&out, NULL);
            e = dra_cel_vm_new(&fm.mem, &vm);
            if (e == DRA_OK)
                e = dra_cel_eval_json(p, vm, NULL, &out, NULL);
            dra_cel_vm_free(vm);
            assert_int_equal(fm.live, 0);
            if (!fm.failed) {
                if (e != DRA_OK || strcmp(out.p, "true") != 0)
                    fail_msg("%s: %s %s", exprs[i], dra_errname(e), out.p ? out.p : "");
                dra_buf_fini(&out);
                break;
            }
            if (e != DRA_ENOMEM && e != DRA_EEVAL && e != DRA_OK)
                fail_msg("%s at %ld: %s", exprs[i], n, dra_errname(e));
            dra_buf_fini(&out);
            assert_true(n < 5000);
        }
        dra_cel_program_unref(p);
    }
    dra_cel_env_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity), cmocka_unit_test(test_semver),
        cmocka_unit_test(test_strings),  cmocka_unit_test(test_lists),
        cmocka_unit_test(test_regex),    cmocka_unit_test(test_time),
        cmocka_unit_test(test_math),     cmocka_unit_test(test_net),
        cmocka_unit_test(test_format_lib), cmocka_unit_test(test_lib_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
