// FFmpeg opened on first use: see cffmpeg.h for why.
#include "cffmpeg.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ACAPELLA_TEXT(x) #x
#define ACAPELLA_NUMBER(x) ACAPELLA_TEXT(x)
// The soname of the libavformat these headers are (libavcodec and libavutil come with it as its dependencies).
#define ACAPELLA_AVFORMAT "libavformat.so." ACAPELLA_NUMBER(LIBAVFORMAT_VERSION_MAJOR)

static struct acapella_ffmpeg functions;

const struct acapella_ffmpeg *acapella_ffmpeg(void) { return &functions; }

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[256];

static void load(void) {
    void *library = dlopen(ACAPELLA_AVFORMAT, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "FFmpeg (%s) cannot be loaded: %s", ACAPELLA_AVFORMAT, dlerror());
        return;
    }
    // dlsym on libavformat's handle finds libavcodec's and libavutil's functions too (its dependencies).
#define ACAPELLA_FFMPEG_FIND(name) \
    functions.name = (__typeof__(&name))dlsym(library, #name); \
    if (functions.name == NULL) { snprintf(failure, sizeof failure, "FFmpeg (%s) has no %s", ACAPELLA_AVFORMAT, #name); return; }
    ACAPELLA_FFMPEG_FUNCTIONS(ACAPELLA_FFMPEG_FIND)
#undef ACAPELLA_FFMPEG_FIND
}

int acapella_ffmpeg_load(char *_Nullable why, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 1;
    if (why != NULL && size > 0) snprintf(why, size, "%s", failure);
    return 0;
}
