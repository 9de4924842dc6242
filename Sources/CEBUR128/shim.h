// Umbrella header for the CEBUR128 system library module.
#include <ebur128.h>
