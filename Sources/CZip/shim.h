// Umbrella header for the CZip system library module.
#include <zip.h>
