// Umbrella header for the CRubberBand system library module (Rubber Band:
// takes heard at another tempo or key, notes put in tune). Its C API is the
// same in 3.x (bookworm) and 4.x (trixie).
#include <rubberband/rubberband-c.h>

