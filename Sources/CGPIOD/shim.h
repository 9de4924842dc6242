// Umbrella header for the CGPIOD system library module.
#include <gpiod.h>
