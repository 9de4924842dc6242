// Umbrella header for the CSndFile system library module.
#include <sndfile.h>
