// Umbrella header for the CZlib system library module (zlib, Debian
// zlib1g-dev): the web page's score written and read
// gzip-compressed (gzopen, gzwrite, gzread).
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

