// Umbrella header for the CALSA system library module.
#include <alsa/asoundlib.h>
