// Umbrella header for the CNettle system library module (Nettle: SHA-256
// of the page's session tokens, which the box keeps only hashed).
#include <nettle/sha2.h>
#include <nettle/version.h>

// Nettle 4 dropped the digest functions' length argument; one call for both.
static inline void acapella_sha256(const uint8_t *bytes, size_t count, uint8_t digest[SHA256_DIGEST_SIZE]) {
    struct sha256_ctx context;
    sha256_init(&context);
    sha256_update(&context, count, bytes);
#if NETTLE_VERSION_MAJOR >= 4
    sha256_digest(&context, digest);
#else
    sha256_digest(&context, SHA256_DIGEST_SIZE, digest);
#endif
}
