// Umbrella header for the CExpat system library module.
#include <expat.h>
#include <stdint.h>

// Where the parser is, through the functions of the expat at hand: expat
// 2.7 (Debian 13 trixie) added 64-bit variants and deprecated the old ones,
// which expat 2.5 (Debian 12 bookworm) has alone. Same values either way.
#if XML_MAJOR_VERSION > 2 || (XML_MAJOR_VERSION == 2 && XML_MINOR_VERSION >= 7)
static inline uint64_t acapella_xml_line(XML_Parser parser) { return XML_GetCurrentLineNumber64(parser); }
static inline uint64_t acapella_xml_column(XML_Parser parser) { return XML_GetCurrentColumnNumber64(parser); }
static inline int64_t acapella_xml_byte_index(XML_Parser parser) { return XML_GetCurrentByteIndex64(parser); }
#else
static inline uint64_t acapella_xml_line(XML_Parser parser) { return XML_GetCurrentLineNumber(parser); }
static inline uint64_t acapella_xml_column(XML_Parser parser) { return XML_GetCurrentColumnNumber(parser); }
static inline int64_t acapella_xml_byte_index(XML_Parser parser) { return XML_GetCurrentByteIndex(parser); }
#endif
