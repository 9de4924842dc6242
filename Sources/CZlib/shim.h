// Umbrella header for the CZlib system library module (zlib, Debian
// zlib1g-dev): the web page's score sent gzip-compressed.
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

// Why a shim: deflateInit2 is a macro. Compresses `size` bytes as one gzip
// member into `output` (capacity `capacity`); returns the bytes written,
// or 0 when it does not fit or zlib fails.
static inline size_t acapella_gzip(const uint8_t *input, size_t size, uint8_t *output, size_t capacity) {
    z_stream stream = {0};
    if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)size;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int result = deflate(&stream, Z_FINISH);
    size_t written = capacity - stream.avail_out;
    deflateEnd(&stream);
    return result == Z_STREAM_END ? written : 0;
}
