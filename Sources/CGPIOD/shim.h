// The few GPIO operations the box needs — open a chip by name, path, number
// or label; request one line for both edges with a bias and active-low; its
// descriptor; wait for and read edge events with kernel timestamps; chip and
// line names for `acapella devices` — over the libgpiod at hand: 1.6
// (Debian 12, Raspberry Pi OS bookworm) or 2.x (Debian 13, trixie), chosen
// when this header is compiled. Only libgpiod 1.x defines
// GPIOD_LINE_BULK_MAX_LINES.
#include <gpiod.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define ACAPELLA_GPIOD_API 1
#else
#define ACAPELLA_GPIOD_API 2
#endif

enum { ACAPELLA_GPIO_BIAS_DISABLE = 0, ACAPELLA_GPIO_BIAS_PULL_UP = 1, ACAPELLA_GPIO_BIAS_PULL_DOWN = 2 };
/// Why opening failed (errno says more).
enum { ACAPELLA_GPIO_NO_CHIP = 1, ACAPELLA_GPIO_NO_LINE = 2, ACAPELLA_GPIO_NOT_REQUESTED = 3 };

/// One requested line on its chip.
typedef struct acapella_gpio {
    struct gpiod_chip *chip;
#if ACAPELLA_GPIOD_API == 1
    struct gpiod_line *line;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *events;
#endif
    unsigned int offset;
    char chip_name[64];
    char line_name[64];
} acapella_gpio;

/// The libgpiod version, "1.6.3" or "2.2.1".
static inline const char *acapella_gpiod_version(void) {
#if ACAPELLA_GPIOD_API == 1
    return gpiod_version_string();
#else
    return gpiod_api_version();
#endif
}

/// 1 or 2: the libgpiod API compiled in.
static inline int acapella_gpiod_api(void) { return ACAPELLA_GPIOD_API; }

/// A chip's name, label and line count; -1 on failure.
static inline int acapella_gpio_chip_describe(struct gpiod_chip *chip, char *name, size_t name_size, char *label, size_t label_size) {
#if ACAPELLA_GPIOD_API == 1
    snprintf(name, name_size, "%s", gpiod_chip_name(chip));
    snprintf(label, label_size, "%s", gpiod_chip_label(chip));
    return (int)gpiod_chip_num_lines(chip);
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return -1;
    snprintf(name, name_size, "%s", gpiod_chip_info_get_name(info));
    snprintf(label, label_size, "%s", gpiod_chip_info_get_label(info));
    int lines = (int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return lines;
#endif
}

/// A line's name ("" when it has none).
static inline void acapella_gpio_chip_line_name(struct gpiod_chip *chip, unsigned int offset, char *name, size_t size) {
    name[0] = 0;
#if ACAPELLA_GPIOD_API == 1
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    const char *found = line ? gpiod_line_name(line) : NULL;
    if (found) snprintf(name, size, "%s", found);
#else
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (!info) return;
    const char *found = gpiod_line_info_get_name(info);
    if (found) snprintf(name, size, "%s", found);
    gpiod_line_info_free(info);
#endif
}

/// A chip by device path.
static inline struct gpiod_chip *acapella_gpio_chip_open(const char *path) { return gpiod_chip_open(path); }

static inline void acapella_gpio_chip_close(struct gpiod_chip *chip) { gpiod_chip_close(chip); }

/// A chip by name ("gpiochip0"), path ("/dev/gpiochip0"), number ("0") or
/// label ("pinctrl-bcm2711"), as libgpiod 1.6's gpiod_chip_open_lookup.
static inline struct gpiod_chip *acapella_gpio_chip_lookup(const char *what) {
#if ACAPELLA_GPIOD_API == 1
    return gpiod_chip_open_lookup(what);
#else
    char path[300];
    if (strchr(what, '/')) return gpiod_chip_open(what);
    bool number = what[0] != 0;
    for (const char *c = what; *c; c++) number = number && *c >= '0' && *c <= '9';
    snprintf(path, sizeof path, number ? "/dev/gpiochip%s" : "/dev/%s", what);
    if (gpiod_is_gpiochip_device(path)) return gpiod_chip_open(path);
    DIR *dev = opendir("/dev");
    if (!dev) return NULL;
    struct gpiod_chip *found = NULL;
    for (struct dirent *entry; !found && (entry = readdir(dev));) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *chip = gpiod_chip_open(path);
        if (!chip) continue;
        char name[64], label[64];
        if (acapella_gpio_chip_describe(chip, name, sizeof name, label, sizeof label) >= 0 && strcmp(label, what) == 0) found = chip;
        else gpiod_chip_close(chip);
    }
    closedir(dev);
    if (!found) errno = ENOENT;
    return found;
#endif
}

/// Closes what `acapella_gpio_open` opened.
static inline void acapella_gpio_close(acapella_gpio *gpio) {
    if (!gpio) return;
#if ACAPELLA_GPIOD_API == 1
    if (gpio->line) gpiod_line_release(gpio->line);
#else
    if (gpio->request) gpiod_line_request_release(gpio->request);
    if (gpio->events) gpiod_edge_event_buffer_free(gpio->events);
#endif
    if (gpio->chip) gpiod_chip_close(gpio->chip);
    free(gpio);
}

/// Requests `line` (a number or a line name) of `chip` for both edges, as
/// an input with `bias`, inverted when `active_low`. NULL on failure, with
/// `*stage` saying where and errno why.
static inline acapella_gpio *acapella_gpio_open(const char *chip, const char *line, bool active_low, int bias, const char *consumer, int *stage) {
    acapella_gpio *gpio = calloc(1, sizeof *gpio);
    if (!gpio) { *stage = ACAPELLA_GPIO_NO_CHIP; return NULL; }
    int saved;
    gpio->chip = acapella_gpio_chip_lookup(chip);
    if (!gpio->chip) { saved = errno; *stage = ACAPELLA_GPIO_NO_CHIP; goto fail; }
    char *end = NULL;
    unsigned long number = strtoul(line, &end, 10);
    bool numeric = line[0] >= '0' && line[0] <= '9' && end && *end == 0;
    char label[64];
    acapella_gpio_chip_describe(gpio->chip, gpio->chip_name, sizeof gpio->chip_name, label, sizeof label);
#if ACAPELLA_GPIOD_API == 1
    gpio->line = numeric ? gpiod_chip_get_line(gpio->chip, (unsigned int)number) : gpiod_chip_find_line(gpio->chip, line);
    if (!gpio->line) { saved = errno; *stage = ACAPELLA_GPIO_NO_LINE; goto fail; }
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    flags |= bias == ACAPELLA_GPIO_BIAS_PULL_UP ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP
        : bias == ACAPELLA_GPIO_BIAS_PULL_DOWN ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN : GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
    if (gpiod_line_request_both_edges_events_flags(gpio->line, consumer, flags) != 0) {
        saved = errno; gpio->line = NULL; *stage = ACAPELLA_GPIO_NOT_REQUESTED; goto fail;
    }
    gpio->offset = gpiod_line_offset(gpio->line);
#else
    int offset;
    if (numeric) {
        char ignored[64];
        int lines = acapella_gpio_chip_describe(gpio->chip, ignored, sizeof ignored, label, sizeof label);
        offset = number < (unsigned long)(lines < 0 ? 0 : lines) ? (int)number : -1;
        if (offset < 0) errno = EINVAL;
    } else {
        offset = gpiod_chip_get_line_offset_from_name(gpio->chip, line);
    }
    if (offset < 0) { saved = errno; *stage = ACAPELLA_GPIO_NO_LINE; goto fail; }
    gpio->offset = (unsigned int)offset;
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *config = gpiod_line_config_new();
    struct gpiod_request_config *request = gpiod_request_config_new();
    gpio->events = gpiod_edge_event_buffer_new(16);
    bool ready = settings && config && request && gpio->events;
    if (ready) {
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
        gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
        gpiod_line_settings_set_bias(settings, bias == ACAPELLA_GPIO_BIAS_PULL_UP ? GPIOD_LINE_BIAS_PULL_UP
            : bias == ACAPELLA_GPIO_BIAS_PULL_DOWN ? GPIOD_LINE_BIAS_PULL_DOWN : GPIOD_LINE_BIAS_DISABLED);
        gpiod_line_settings_set_active_low(settings, active_low);
        gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC);
        ready = gpiod_line_config_add_line_settings(config, &gpio->offset, 1, settings) == 0;
        gpiod_request_config_set_consumer(request, consumer);
        if (ready) gpio->request = gpiod_chip_request_lines(gpio->chip, request, config);
    }
    saved = errno;
    if (settings) gpiod_line_settings_free(settings);
    if (config) gpiod_line_config_free(config);
    if (request) gpiod_request_config_free(request);
    if (!gpio->request) { *stage = ACAPELLA_GPIO_NOT_REQUESTED; goto fail; }
#endif
    acapella_gpio_chip_line_name(gpio->chip, gpio->offset, gpio->line_name, sizeof gpio->line_name);
    return gpio;
fail:
    acapella_gpio_close(gpio);
    errno = saved;
    return NULL;
}

/// The descriptor that becomes readable when an edge is waiting.
static inline int acapella_gpio_fd(acapella_gpio *gpio) {
#if ACAPELLA_GPIOD_API == 1
    return gpiod_line_event_get_fd(gpio->line);
#else
    return gpiod_line_request_get_fd(gpio->request);
#endif
}

/// Waits up to `timeout_ns` for an edge: 1 when one is waiting, 0 on
/// timeout, -1 on error (errno).
static inline int acapella_gpio_wait(acapella_gpio *gpio, int64_t timeout_ns) {
#if ACAPELLA_GPIOD_API == 1
    struct timespec timeout = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };
    return gpiod_line_event_wait(gpio->line, &timeout);
#else
    return gpiod_line_request_wait_edge_events(gpio->request, timeout_ns);
#endif
}

/// Reads one waiting edge: 0 with `*rising` (the logical level went up:
/// pressed, with active-low) and its kernel timestamp, -1 on error.
static inline int acapella_gpio_read(acapella_gpio *gpio, bool *rising, int64_t *nanoseconds) {
#if ACAPELLA_GPIOD_API == 1
    struct gpiod_line_event event;
    if (gpiod_line_event_read(gpio->line, &event) != 0) return -1;
    *rising = event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    *nanoseconds = (int64_t)event.ts.tv_sec * 1000000000 + event.ts.tv_nsec;
    return 0;
#else
    int count = gpiod_line_request_read_edge_events(gpio->request, gpio->events, 1);
    if (count != 1) { if (count == 0) errno = EAGAIN; return -1; }
    struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(gpio->events, 0);
    *rising = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
    *nanoseconds = (int64_t)gpiod_edge_event_get_timestamp_ns(event);
    return 0;
#endif
}
