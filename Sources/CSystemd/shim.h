// Umbrella header for the CSystemd system library module: libsystemd's
// sd-daemon API (sd_notify, sd_watchdog_enabled) for Type=notify services.
#include <systemd/sd-daemon.h>
