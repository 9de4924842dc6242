// Umbrella header for the CExpat system library module.
#include <expat.h>
