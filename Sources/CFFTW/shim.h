// Umbrella header for the CFFTW system library module: FFTW 3, single
// precision (libfftw3f), for the calibration's cross-correlation.
#include <fftw3.h>
