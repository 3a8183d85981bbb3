/*
 * utf8.c: strict UTF-8 decoding (RFC 3629), shared by the modules that
 * quote or scan text: overlong forms, surrogates and code points above
 * U+10FFFF are invalid, as Go's unicode/utf8 and CEL judge them.
 */
#include "dra/base.h"

size_t dra_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    size_t n;
    uint32_t c;
    if (len == 0)
        return 0;
    c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        c &= 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        c &= 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        c &= 0x07;
    } else {
        return 0; /* continuation byte, overlong lead C0/C1, or F5..FF */
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
        (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
        return 0;
    *cp = c;
    return n;
}
