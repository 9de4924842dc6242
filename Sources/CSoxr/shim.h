// Umbrella header for the CSoxr system library module (libsoxr: sample-rate
// conversion of reference recordings to the project rate).
#include <soxr.h>
