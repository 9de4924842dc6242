// Umbrella header for the CALSA system library module.
#include <alsa/asoundlib.h>

// Why a shim: ALSA's error handler is variadic, which Swift cannot
// implement. This one swallows libasound's own stderr chatter; acapella
// reports every failure itself, with the call's name and the device.
static void acapella_alsa_quiet_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void acapella_alsa_silence_errors(void) {
    snd_lib_error_set_handler(acapella_alsa_quiet_handler);
}
